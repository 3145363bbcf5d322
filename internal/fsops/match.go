package fsops

import (
	"bytes"
	"io"
	"strings"

	"github.com/dshfs/dsh-fs/internal/text"
)

// Replacement is one edit: replace Old with New, exactly once unless
// ReplaceAll, or the one match Occurrence or Line picks.
type Replacement struct {
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
	// Occurrence picks the Nth match of Old (1-based, in file order);
	// 0 picks none.
	Occurrence int `json:"occurrence,omitempty"`
	// Line picks the match that starts on this line (1-based); 0 picks
	// none.
	Line int `json:"line,omitempty"`
}

// splice is an edit located in a content: the matches of old, to be
// replaced by new. It writes the result straight from the content it was
// found in, so the edited file is never held twice.
type splice struct {
	content []byte
	at      []int // offsets of the non-overlapping matches, ascending
	oldLen  int
	new     string        // in the content's encoding
	enc     text.Encoding // the content's encoding
}

// locate finds old in the UTF-8 content, as locateIn does.
func locate(content []byte, old, new string) splice {
	sp, _ := locateIn(content, text.UTF8, old, new)
	return sp
}

// locateIn finds old in content, a file in enc, leftmost first and
// without overlaps, never in the BOM and only at the start of a
// character; old and new are encoded into enc, so the splice leaves every
// other byte as it was (a new text enc cannot store is an
// *text.UnencodableError). A model types "\n" and a CRLF file stays
// CRLF: where every line ends in CRLF, old and new are taken with "\n"
// as "\r\n"; with mixed endings that spelling is tried when old does not
// match as typed.
func locateIn(content []byte, enc text.Encoding, old, new string) (splice, error) {
	endings := enc.LineEndings(content)
	if endings == "crlf" {
		old, new = toCRLF(old), toCRLF(new)
	}
	encNew, err := enc.Encode(new)
	if err != nil {
		return splice{}, err
	}
	var at []int
	encOld, err := enc.Encode(old)
	if err == nil {
		at = enc.IndexAll(content, encOld, enc.BOMLen())
	}
	if len(at) == 0 && endings == "mixed" && hasBareLF(old) {
		if crOld := toCRLF(old); crOld != old {
			if o, err := enc.Encode(crOld); err == nil {
				if at = enc.IndexAll(content, o, enc.BOMLen()); len(at) > 0 {
					encOld = o
					encNew, _ = enc.Encode(toCRLF(new))
				}
			}
		}
	}
	return splice{content: content, at: at, oldLen: len(encOld), new: string(encNew), enc: enc}, nil
}

func indexAll(content []byte, old string) []int {
	if old == "" {
		return nil // Edit refuses an empty old text before it gets here
	}
	var at []int
	sep := []byte(old)
	for off := 0; ; {
		i := bytes.Index(content[off:], sep)
		if i < 0 {
			return at
		}
		at = append(at, off+i)
		off += i + len(sep)
	}
}

func hasBareLF(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			return true
		}
	}
	return false
}

// toCRLF writes every bare "\n" of s as "\r\n", leaving "\r\n" alone.
func toCRLF(s string) string {
	var b strings.Builder
	b.Grow(len(s) + strings.Count(s, "\n"))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// size is the length of the edited content.
func (s splice) size() int {
	return len(s.content) + len(s.at)*(len(s.new)-s.oldLen)
}

// writeTo writes the edited content: the unchanged spans straight from the
// content, the new text in between.
func (s splice) writeTo(w io.Writer) (int64, error) {
	var n int64
	prev := 0
	for _, i := range s.at {
		m, err := w.Write(s.content[prev:i])
		n += int64(m)
		if err != nil {
			return n, err
		}
		m, err = io.WriteString(w, s.new)
		n += int64(m)
		if err != nil {
			return n, err
		}
		prev = i + s.oldLen
	}
	m, err := w.Write(s.content[prev:])
	return n + int64(m), err
}

// bytes returns the edited content as a new slice.
func (s splice) bytes() []byte {
	var b bytes.Buffer
	b.Grow(s.size())
	s.writeTo(&b)
	return b.Bytes()
}

// lines returns the 1-based line number of each match.
func (s splice) lines() []int {
	out := make([]int, len(s.at))
	line, prev := 1, 0
	for k, i := range s.at {
		line += s.enc.CountLF(s.content[prev:i])
		out[k] = line
		prev = i
	}
	return out
}

// text returns the content as UTF-8 text, for the closest region. A
// UTF-8 content is itself, BOM and all, as it always was.
func (s splice) text() []byte {
	if s.enc.IsUTF8() {
		return s.content
	}
	return s.enc.Decode(s.content)
}
