// Package text recognizes what kind of text a file holds: whether it is
// text at all, its byte-order mark and its line endings. read, edit and the
// diff all ask the same questions and must get the same answers.
package text

import (
	"bytes"
	"unicode/utf8"
)

// BOM is the UTF-8 byte-order mark.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// SniffLen is how much of a file IsBinary needs to see to decide.
const SniffLen = 8192

// IsBinary reports whether b, the first bytes of a file, is not UTF-8 text:
// it holds a NUL byte or an invalid UTF-8 sequence. A sequence cut by the
// end of b is not held against it, so a prefix of a text file is text.
func IsBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if utf8.Valid(b) {
		return false // the common case, many times faster than decoding
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(b) {
				return false // cut at the end of the sample
			}
			return true
		}
		b = b[size:]
	}
	return false
}

// HasUTF16BOM reports whether b starts with a UTF-16 byte-order mark,
// little- or big-endian.
func HasUTF16BOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF})
}

// HasBOM reports whether b starts with the UTF-8 byte-order mark.
func HasBOM(b []byte) bool { return bytes.HasPrefix(b, BOM) }

// LineEndings names the line endings of b: "lf", "crlf", "mixed", or
// "none" when b has no line break at all. A file is "crlf" only when every
// "\n" is preceded by "\r".
func LineEndings(b []byte) string {
	lf := bytes.Count(b, []byte{'\n'})
	if lf == 0 {
		return "none"
	}
	return endings(lf, bytes.Count(b, []byte("\r\n")))
}

// TrimToRune drops an incomplete UTF-8 sequence from the end of b, left
// there by a cut at a byte count. It never drops a complete rune.
func TrimToRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// Ellipsis marks where a shown line was cut.
const Ellipsis = "…"

// CutLine is line, cut at max bytes (at a character boundary) and marked
// with Ellipsis when longer.
func CutLine(line []byte, max int) string {
	if len(line) <= max {
		return string(line)
	}
	return string(TrimToRune(line[:max])) + Ellipsis
}
