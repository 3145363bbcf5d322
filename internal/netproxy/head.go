package netproxy

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// The bounds of one message head: what a client or a server may make the
// proxy hold before it decides anything.
const (
	maxHeadBytes = 64 << 10
	maxHeadLines = 512
)

// errHeadEmpty is a connection that ended before the first byte of a
// head: a client that went away, nothing to answer.
var errHeadEmpty = errors.New("no message")

// headError is a head the proxy does not accept. Its text never quotes
// the bytes read: they may come from an upstream that echoes what it
// was sent, credentials included.
type headError struct{ why string }

func (e *headError) Error() string { return "malformed message head: " + e.why }

func badHead(why string) error { return &headError{why: why} }

// field is one header line of a head, its name as sent.
type field struct{ name, value string }

// head is an HTTP/1.x message head: its start line (the request line or
// the status line, not yet parsed) and its header fields in order.
type head struct {
	start  string
	fields []field
}

// readHead reads one head from br: the start line, the header lines,
// the empty line that ends them; nothing past it. Lines end in CR LF or
// LF. It accepts only what HTTP/1.1 allows a sender to send (RFC 9112):
// a field name is a token followed by its colon, a field value holds no
// control byte but HTAB, no line is folded (obs-fold), no CR stands
// alone, and the whole head stays within maxHeadBytes and maxHeadLines.
// What reaches a server is then exactly what was checked.
func readHead(br *bufio.Reader) (*head, error) {
	budget := maxHeadBytes
	h := &head{}
	for n := 0; ; n++ {
		if n > maxHeadLines {
			return nil, badHead("it has more than " + strconv.Itoa(maxHeadLines) + " header lines")
		}
		line, err := readLine(br, &budget)
		if err == io.EOF {
			if n == 0 {
				return nil, errHeadEmpty
			}
			return nil, badHead("it ends before its empty line")
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			if err := checkText(line, false); err != nil {
				return nil, badHead("start line: " + err.Error())
			}
			h.start = line
			continue
		}
		if line == "" {
			return h, nil
		}
		f, err := parseField(line)
		if err != nil {
			return nil, err
		}
		h.fields = append(h.fields, f)
	}
}

// readLine is the next line of br without its end (CR LF or LF),
// counting its bytes against budget; io.EOF when br ends before the
// line's first byte.
func readLine(br *bufio.Reader, budget *int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		*budget -= len(chunk)
		if *budget < 0 {
			return "", badHead("it is longer than " + strconv.Itoa(maxHeadBytes>>10) + " KiB")
		}
		b = append(b, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return "", badHead("it ends before its empty line")
			}
			return "", err
		}
		break
	}
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return string(b), nil
}

// parseField parses one header line: name ":" OWS value OWS.
func parseField(line string) (field, error) {
	if line[0] == ' ' || line[0] == '\t' {
		return field{}, badHead("a folded header line (obs-fold)")
	}
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return field{}, badHead("a header line without a colon")
	}
	if !isToken(name) {
		return field{}, badHead("a header name that is not a token")
	}
	value = strings.Trim(value, " \t")
	if err := checkText(value, true); err != nil {
		return field{}, badHead("a header value: " + err.Error())
	}
	return field{name: name, value: value}, nil
}

// checkText refuses every control byte (NUL, a CR alone, DEL …) but HTAB
// where tab is true.
func checkText(s string, tab bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' && tab {
			continue
		}
		if c < ' ' || c == 0x7f {
			return errors.New("a control byte")
		}
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// isVersion reports whether v is HTTP/1.0 … HTTP/1.9: the versions whose
// heads this reader knows.
func isVersion(v string) bool {
	return len(v) == len("HTTP/1.x") && strings.HasPrefix(v, "HTTP/1.") && '0' <= v[7] && v[7] <= '9'
}

// requestLine parses h's start line as METHOD SP target SP HTTP/1.x.
func (h *head) requestLine() (method, target, version string, err error) {
	parts := strings.Split(h.start, " ")
	switch {
	case len(parts) != 3:
		return "", "", "", badHead("the request line is not METHOD TARGET HTTP/1.x")
	case !isToken(parts[0]):
		return "", "", "", badHead("the method is not a token")
	case parts[1] == "":
		return "", "", "", badHead("no request target")
	case !isVersion(parts[2]):
		return "", "", "", badHead("the version is not HTTP/1.x")
	}
	return parts[0], parts[1], parts[2], nil
}

// statusLine parses h's start line as HTTP/1.x SP NNN [SP reason] and
// returns the status code.
func (h *head) statusLine() (int, error) {
	version, rest, _ := strings.Cut(h.start, " ")
	code, _, _ := strings.Cut(rest, " ")
	if !isVersion(version) {
		return 0, badHead("the status line's version is not HTTP/1.x")
	}
	n, err := strconv.Atoi(code)
	if len(code) != 3 || err != nil || n < 100 {
		return 0, badHead("the status code is not three digits")
	}
	return n, nil
}
