package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bad input never ends a session (docs/design.md §5). The SDK's stdio
// transport ends the session at the first line it cannot decode (not
// JSON, an object id, a line over its 16 MiB cap), and a failure printed
// then would put on stdout what is not JSON-RPC, all stdout may carry.
// lineFilter stands in front of it: it hands the SDK only lines that
// decode as JSON-RPC messages, and answers each other line itself, as
// JSON-RPC 2.0 says: -32700 for a line that is not JSON, -32600 for JSON
// that is no message, with the line's id when it has a usable one and
// null otherwise.

// maxMessageBytes bounds one message from the client. A longer line is
// answered -32600 and skipped as it arrives, never held whole: the SDK's
// own cap (16 MiB) would end the session instead, and without one a
// client could make the server hold any amount. 64 MiB carries a
// write_file of any file the diff and read settings handle.
const maxMessageBytes = 64 << 20

// Error codes of JSON-RPC 2.0.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lockedWriter is standard output, shared by the SDK's responses and the
// filter's: each Write is one whole message line, never interleaved.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// lineFilter is the SDK transport's reader: the client's lines that are
// JSON-RPC messages, each ending in "\n".
type lineFilter struct {
	in  *bufio.Reader
	out io.Writer // the client's, a lockedWriter
	log io.Writer // standard error
	// batchesAllowed reports whether the session's protocol still has
	// JSON-RPC batches (before 2025-06-18): on later ones the SDK ends the
	// session at a batch.
	batchesAllowed func() bool

	pending []byte // the rest of the current line, for Read
	err     error  // the input's end or failure, once pending is out
}

func newLineFilter(in io.Reader, out, log io.Writer, batchesAllowed func() bool) *lineFilter {
	return &lineFilter{in: bufio.NewReaderSize(in, 64<<10), out: out, log: log, batchesAllowed: batchesAllowed}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if line != nil {
			f.pending = f.admit(line)
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close lets the SDK close the transport; the client's input is the
// process's and stays open.
func (*lineFilter) Close() error { return nil }

// readLine returns the next line with its "\n" (the last one may lack
// it), or an empty one in place of a line over maxMessageBytes, which it
// answers; nil and the error at the input's end.
func (f *lineFilter) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxMessageBytes {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong:
			f.answer(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: message larger than %d MiB", maxMessageBytes>>20), "a line over the message cap")
			if err != nil {
				return nil, err
			}
			return []byte{}, nil
		case err != nil && len(line) > 0:
			// The last line, without its "\n": judged as any other.
			return line, nil
		case err != nil:
			return nil, err
		}
		return line, nil
	}
}

// admit returns line, ending in "\n", when it is a JSON-RPC message the
// SDK can take; otherwise it answers the line and returns nil.
func (f *lineFilter) admit(line []byte) []byte {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return nil
	}
	// Validity first: the SDK's decoder takes the first of two values on
	// a line and then ends the session at the second.
	if !json.Valid(body) {
		f.answer(nil, codeParseError, "Parse error", line)
		return nil
	}
	var err error
	if body[0] == '[' {
		err = f.checkBatch(body)
	} else {
		err = checkMessage(body)
	}
	if err == nil {
		return append(body, '\n')
	}
	f.answer(usableID(body), codeInvalidRequest, "Invalid Request: "+err.Error(), line)
	return nil
}

func (f *lineFilter) checkBatch(body []byte) error {
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		return err
	}
	if len(batch) == 0 {
		return errors.New("empty batch")
	}
	if !f.batchesAllowed() {
		return errors.New("JSON-RPC batches are not part of this session's protocol")
	}
	for _, raw := range batch {
		if err := checkMessage(raw); err != nil {
			return err
		}
	}
	return nil
}

// checkMessage says why raw, one JSON value, is no JSON-RPC message the
// SDK's transport can take; nil when it is one. It accepts no more than
// the SDK's decoder does (which would end the session at the rest), and
// answers a response with neither result nor error, which the SDK would
// drop unanswered. It does not run that decoder: each of its calls costs
// a warm small call a large buffer, and the SDK decodes every message
// once more itself.
func checkMessage(raw []byte) error {
	if nestedDeeper(raw, maxNesting) {
		return fmt.Errorf("nested deeper than %d levels", maxNesting)
	}
	// Into a map: its keys are matched exactly, as the SDK matches them.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return errors.New("not a JSON object")
	}
	if v := string(m["jsonrpc"]); v != `"2.0"` {
		return fmt.Errorf(`jsonrpc is %s, not "2.0"`, orAbsent(v))
	}
	hasID := false
	if id, ok := m["id"]; ok && string(id) != "null" {
		var v any
		if err := json.Unmarshal(id, &v); err != nil {
			return fmt.Errorf("id %s is no string or number", id)
		}
		switch v.(type) {
		case string, float64:
		default:
			return fmt.Errorf("id %s is no string or number", id)
		}
		hasID = true
	}
	if method, ok := m["method"]; ok {
		var name *string
		if err := json.Unmarshal(method, &name); err != nil {
			return fmt.Errorf("method %s is no string", method)
		}
		return nil
	}
	if !hasID {
		return errors.New("neither a method nor an id")
	}
	_, hasResult := m["result"]
	e, hasError := m["error"]
	if hasError && string(e) != "null" {
		var we jsonrpc.Error
		if err := json.Unmarshal(e, &we); err != nil {
			return fmt.Errorf("error %.100s is no JSON-RPC error", e)
		}
		return nil
	}
	if !hasResult {
		return errors.New("neither a method nor a result or error")
	}
	return nil
}

// maxNesting is the SDK's decoder's bound on nested objects and arrays.
const maxNesting = 1000

// nestedDeeper reports whether raw nests objects and arrays deeper than
// limit, as the SDK's decoder counts them (strings skipped).
func nestedDeeper(raw []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

func orAbsent(v string) string {
	if v == "" {
		return "absent"
	}
	return v
}

// usableID is the id of a message that is an object with a string or
// integer id; nil otherwise (the answer's id is then null).
func usableID(body []byte) any {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	if id, err := jsonrpc.MakeID(m.ID); err != nil || !id.IsValid() {
		return nil
	}
	return m.ID
}

// answer writes the error response to a line that is no message, and
// says on standard error what was skipped.
func (f *lineFilter) answer(id any, code int, message string, line any) {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	if _, err := f.out.Write(append(raw, '\n')); err != nil {
		fmt.Fprintf(f.log, "dsh-fs mcp: cannot answer a bad line: %v\n", err)
	}
	switch l := line.(type) {
	case []byte:
		fmt.Fprintf(f.log, "dsh-fs mcp: %s (%d): %.200q\n", message, code, bytes.TrimSpace(l))
	default:
		fmt.Fprintf(f.log, "dsh-fs mcp: %s (%d): %v\n", message, code, l)
	}
}
