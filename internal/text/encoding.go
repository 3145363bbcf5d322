package text

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Encoding is how a text file stores its characters. The model sends and
// receives UTF-8; read decodes from the file's encoding and edit encodes
// back into it.
type Encoding int

// The encodings dsh-fs recognizes, by their names in results
// (docs/design.md §5).
const (
	// UTF8 is UTF-8 without a byte-order mark: "utf-8".
	UTF8 Encoding = iota
	// UTF8BOM is UTF-8 that starts with EF BB BF: "utf-8-bom".
	UTF8BOM
	// UTF16LE is UTF-16 little-endian that starts with FF FE: "utf-16le".
	UTF16LE
	// UTF16BE is UTF-16 big-endian that starts with FE FF: "utf-16be".
	UTF16BE
	// Windows1252 is a file that is not valid UTF-8, holds no NUL byte,
	// and whose every byte Windows-1252 defines: "windows-1252".
	Windows1252
	// Latin1 is such a file with one of the five bytes Windows-1252
	// leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D): the whole file is
	// then ISO-8859-1, where every byte is the character of its number:
	// "latin-1".
	Latin1
)

var encodingNames = [...]string{"utf-8", "utf-8-bom", "utf-16le", "utf-16be", "windows-1252", "latin-1"}

// String is the encoding's name in results.
func (e Encoding) String() string { return encodingNames[e] }

// BOMLen is the length of the byte-order mark a file in e starts with.
func (e Encoding) BOMLen() int {
	switch e {
	case UTF8BOM:
		return len(BOM)
	case UTF16LE, UTF16BE:
		return 2
	}
	return 0
}

// IsUTF8 reports whether e stores text as UTF-8, with or without a BOM.
func (e Encoding) IsUTF8() bool { return e == UTF8 || e == UTF8BOM }

// unit is the size of a code unit: a match or a line break starts only at
// a multiple of it.
func (e Encoding) unit() int {
	if e == UTF16LE || e == UTF16BE {
		return 2
	}
	return 1
}

func (e Encoding) x() encoding.Encoding {
	switch e {
	case UTF16LE:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case UTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case Windows1252:
		return charmap.Windows1252
	case Latin1:
		return charmap.ISO8859_1
	}
	return encoding.Nop
}

// undefined1252 are the bytes Windows-1252 leaves undefined.
func undefined1252(c byte) bool {
	return c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D
}

// Sniffer decides the encoding of a file fed to it in chunks, in order,
// without holding it: a UTF-16 BOM first, then NUL bytes (binary), then
// whether the whole file is valid UTF-8.
type Sniffer struct {
	started bool
	head    []byte // the first bytes, until there are enough to see a BOM
	enc     Encoding
	binary  bool
	invalid bool   // not valid UTF-8
	undef   bool   // a byte Windows-1252 leaves undefined
	carry   []byte // an incomplete UTF-8 sequence, or UTF-16 code unit, at the end of a chunk
	high    bool   // UTF-16: the last unit was a high surrogate
}

// Feed looks at the next chunk of the file. It reports false once the file
// is known to be binary; the caller may stop there.
func (s *Sniffer) Feed(b []byte) bool {
	if s.started {
		return s.feed(b)
	}
	if len(s.head) == 0 && len(b) >= len(BOM) {
		return s.start(b)
	}
	// The BOM decides: gather its three bytes first, and no more, so a
	// whole file fed at once is never copied.
	take := min(len(BOM)-len(s.head), len(b))
	s.head = append(s.head, b[:take]...)
	if len(s.head) < len(BOM) {
		return true
	}
	if !s.start(s.head) {
		return false
	}
	return s.feed(b[take:])
}

// start decides by b, the first bytes, and feeds them.
func (s *Sniffer) start(b []byte) bool {
	s.started = true
	s.head = nil
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		s.enc = UTF16LE
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		s.enc = UTF16BE
	case HasBOM(b):
		s.enc = UTF8BOM
	}
	if s.enc.unit() == 2 {
		b = b[2:]
	}
	return s.feed(b)
}

func (s *Sniffer) feed(b []byte) bool {
	if s.binary {
		return false
	}
	if s.enc.unit() == 2 {
		s.feed16(b)
		return !s.binary
	}
	if bytes.IndexByte(b, 0) >= 0 {
		s.binary = true
		return false
	}
	if s.invalid {
		s.scanUndef(b)
		return true
	}
	if len(s.carry) > 0 {
		need := min(utf8.UTFMax-len(s.carry), len(b))
		joined := append(s.carry, b[:need]...)
		r, size := utf8.DecodeRune(joined)
		switch {
		case r == utf8.RuneError && size <= 1 && utf8.FullRune(joined):
			s.invalid = true
		case r == utf8.RuneError && size <= 1:
			s.carry = joined // still incomplete: b was tiny
			return true
		default:
			b = b[size-len(s.carry):]
		}
		s.carry = nil
		if s.invalid {
			s.scanUndef(joined)
			s.scanUndef(b)
			return true
		}
	}
	if utf8.Valid(b) {
		return true
	}
	// Invalid, or a sequence cut at the end of the chunk.
	i := len(b)
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				i = len(b) - k
			}
			break
		}
	}
	if utf8.Valid(b[:i]) {
		s.carry = append([]byte(nil), b[i:]...)
		return true
	}
	s.invalid = true
	s.scanUndef(b)
	return true
}

func (s *Sniffer) scanUndef(b []byte) {
	if s.undef {
		return
	}
	for _, c := range b {
		if undefined1252(c) {
			s.undef = true
			return
		}
	}
}

// feed16 checks UTF-16 code units: every high surrogate followed by a low
// one, no low one alone, an even number of bytes.
func (s *Sniffer) feed16(b []byte) {
	if len(s.carry) == 1 && len(b) > 0 {
		s.unit16(append(s.carry, b[0]))
		s.carry, b = nil, b[1:]
	}
	for len(b) >= 2 && !s.binary {
		s.unit16(b[:2])
		b = b[2:]
	}
	if len(b) == 1 {
		s.carry = []byte{b[0]}
	}
}

func (s *Sniffer) unit16(b []byte) {
	u := rune(b[0]) | rune(b[1])<<8
	if s.enc == UTF16BE {
		u = rune(b[1]) | rune(b[0])<<8
	}
	switch {
	case s.high && (u < 0xDC00 || u > 0xDFFF):
		s.binary = true
	case s.high:
		s.high = false
	case u >= 0xD800 && u <= 0xDBFF:
		s.high = true
	case u >= 0xDC00 && u <= 0xDFFF:
		s.binary = true
	}
}

// Result names the encoding of everything fed, or reports that it is not
// text: a NUL byte outside UTF-16, or UTF-16 that does not decode.
func (s *Sniffer) Result() (enc Encoding, binary bool) {
	if !s.started {
		s.start(s.head)
	}
	if s.binary {
		return 0, true
	}
	if s.enc.unit() == 2 {
		if s.high || len(s.carry) > 0 {
			return 0, true
		}
		return s.enc, false
	}
	if len(s.carry) > 0 {
		s.invalid = true // a sequence cut by the end of the file
		s.scanUndef(s.carry)
	}
	if !s.invalid {
		return s.enc, false
	}
	if s.undef {
		return Latin1, false
	}
	return Windows1252, false
}

// Detect names the encoding of the whole content b, or reports that it is
// not text (binary).
func Detect(b []byte) (enc Encoding, binary bool) {
	var s Sniffer
	s.Feed(b)
	return s.Result()
}

// Decode returns b, the content of a file in e (its BOM included), as
// UTF-8 without the BOM. b must be text in e (Detect).
func (e Encoding) Decode(b []byte) []byte {
	b = b[min(e.BOMLen(), len(b)):]
	if e.IsUTF8() {
		return b
	}
	out, err := e.x().NewDecoder().Bytes(b)
	if err != nil {
		return b // unreachable for text Detect accepted
	}
	return out
}

// UnencodableError says a character cannot be stored in an encoding.
type UnencodableError struct {
	Rune     rune
	Encoding Encoding
}

func (e *UnencodableError) Error() string {
	return fmt.Sprintf("%q (%U) cannot be stored in %s", e.Rune, e.Rune, e.Encoding)
}

// Encode returns the UTF-8 text s in e, without a BOM. A character e
// cannot store, or s that is not valid UTF-8, is an *UnencodableError
// naming the first one. UTF-8 takes s as it is.
func (e Encoding) Encode(s string) ([]byte, error) {
	if e.IsUTF8() {
		return []byte(s), nil // bytes in, bytes out, as for any UTF-8 file
	}
	if !utf8.ValidString(s) {
		return nil, &UnencodableError{Rune: utf8.RuneError, Encoding: e}
	}
	for _, r := range s {
		switch e {
		case Windows1252:
			if _, ok := charmap.Windows1252.EncodeRune(r); !ok {
				return nil, &UnencodableError{Rune: r, Encoding: e}
			}
		case Latin1:
			if r > 0xFF {
				return nil, &UnencodableError{Rune: r, Encoding: e}
			}
		}
	}
	if e.unit() == 2 {
		u := utf16.Encode([]rune(s))
		out := make([]byte, 0, 2*len(u))
		for _, c := range u {
			if e == UTF16LE {
				out = append(out, byte(c), byte(c>>8))
			} else {
				out = append(out, byte(c>>8), byte(c))
			}
		}
		return out, nil
	}
	return e.x().NewEncoder().Bytes([]byte(s))
}

// IndexAll returns the offsets of the non-overlapping occurrences of sep
// in b, leftmost first, at or after from and aligned on e's code units.
func (e Encoding) IndexAll(b, sep []byte, from int) []int {
	var at []int
	if len(sep) == 0 {
		return nil
	}
	u := e.unit()
	for off := from; off <= len(b); {
		i := bytes.Index(b[off:], sep)
		if i < 0 {
			return at
		}
		if (off+i)%u != 0 {
			off += i + 1
			continue
		}
		at = append(at, off+i)
		off += i + len(sep)
	}
	return at
}

// CountLF counts the line feeds of b, the content of a file in e.
func (e Encoding) CountLF(b []byte) int {
	if e.unit() == 1 {
		return bytes.Count(b, []byte{'\n'})
	}
	lf, _ := e.count16(b)
	return lf
}

// LineEndings names the line endings of b, the content of a file in e, as
// LineEndings does for UTF-8.
func (e Encoding) LineEndings(b []byte) string {
	if e.unit() == 1 {
		return LineEndings(b)
	}
	lf, crlf := e.count16(b)
	return endings(lf, crlf)
}

func (e Encoding) count16(b []byte) (lf, crlf int) {
	lo, hi := 0, 1
	if e == UTF16BE {
		lo, hi = 1, 0
	}
	cr := false
	for i := 0; i+1 < len(b); i += 2 {
		if b[i+hi] != 0 {
			cr = false
			continue
		}
		switch b[i+lo] {
		case '\n':
			lf++
			if cr {
				crlf++
			}
			cr = false
		case '\r':
			cr = true
		default:
			cr = false
		}
	}
	return lf, crlf
}

func endings(lf, crlf int) string {
	switch {
	case lf == 0:
		return "none"
	case crlf == 0:
		return "lf"
	case crlf == lf:
		return "crlf"
	}
	return "mixed"
}

// NewReader returns the text of r, a file in e read from its start, as
// UTF-8 without the BOM. r must be text in e (Sniffer).
func (e Encoding) NewReader(r io.Reader) io.Reader {
	skip := &bomSkipper{r: r, n: e.BOMLen()}
	if e.IsUTF8() {
		return skip
	}
	return transform.NewReader(skip, e.x().NewDecoder())
}

type bomSkipper struct {
	r io.Reader
	n int
}

func (s *bomSkipper) Read(p []byte) (int, error) {
	for s.n > 0 {
		n, err := s.r.Read(p[:min(len(p), s.n)])
		s.n -= n
		if err != nil {
			return 0, err
		}
	}
	return s.r.Read(p)
}

// EndingCounter counts the line breaks of UTF-8 text fed to it in chunks,
// a "\r\n" cut between two chunks included.
type EndingCounter struct {
	lf, crlf int
	cr       bool // the last byte so far is '\r'
}

// Feed counts the line breaks of the next chunk.
func (c *EndingCounter) Feed(b []byte) {
	if len(b) == 0 {
		return
	}
	c.lf += bytes.Count(b, []byte{'\n'})
	if bytes.IndexByte(b, '\r') >= 0 { // most files have none: skip the slower count
		c.crlf += bytes.Count(b, []byte("\r\n"))
	}
	if c.cr && b[0] == '\n' {
		c.crlf++
	}
	c.cr = b[len(b)-1] == '\r'
}

// LF is the number of line feeds so far.
func (c *EndingCounter) LF() int { return c.lf }

// String names the line endings so far, as LineEndings does.
func (c *EndingCounter) String() string { return endings(c.lf, c.crlf) }

// ParseEncoding returns the encoding of a name as results spell it.
func ParseEncoding(name string) (Encoding, bool) {
	for i, n := range encodingNames {
		if n == name {
			return Encoding(i), true
		}
	}
	return 0, false
}

// Names lists the encodings' names, in their order.
func Names() []string { return encodingNames[:] }

// NewEncoder returns the UTF-8 text of r encoded in e, in a stream: the
// BOM first for the encodings that have one (a BOM r starts with is not
// doubled), then the text. A character e cannot store, or invalid UTF-8
// where e is not UTF-8, is an *UnencodableError from Read.
func (e Encoding) NewEncoder(r io.Reader) io.Reader {
	c := &encoder{enc: e, r: r, first: true}
	switch e {
	case UTF8BOM:
		c.out = append(c.out, BOM...)
	case UTF16LE:
		c.out = []byte{0xFF, 0xFE}
	case UTF16BE:
		c.out = []byte{0xFE, 0xFF}
	}
	return c
}

type encoder struct {
	enc   Encoding
	r     io.Reader
	first bool   // no input read yet: a BOM there is dropped
	buf   []byte // input
	carry []byte // an incomplete UTF-8 sequence at the end of the last input
	out   []byte // encoded, not yet returned
	err   error  // to return once out is drained
}

func (c *encoder) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.buf == nil {
			c.buf = make([]byte, 256<<10)
		}
		k := copy(c.buf, c.carry)
		n, err := c.r.Read(c.buf[k:])
		chunk := c.buf[:k+n]
		c.carry = c.carry[:0]
		if c.first && (len(chunk) >= len(BOM) || err != nil) {
			c.first = false
			chunk = bytes.TrimPrefix(chunk, BOM)
		} else if c.first {
			c.carry = append(c.carry, chunk...) // too short to tell yet
			continue
		}
		if err == nil {
			cut := len(chunk)
			for i := 1; i <= utf8.UTFMax && i <= len(chunk); i++ {
				if utf8.RuneStart(chunk[len(chunk)-i]) {
					if !utf8.FullRune(chunk[len(chunk)-i:]) {
						cut = len(chunk) - i
					}
					break
				}
			}
			c.carry = append(c.carry, chunk[cut:]...)
			chunk = chunk[:cut]
		} else {
			c.err = err
		}
		out, encErr := c.enc.Encode(string(chunk))
		if encErr != nil {
			c.err = encErr
			return 0, encErr
		}
		c.out = out
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}
