package gitguard

import (
	"bytes"
	"fmt"
	"strings"
)

// Entry is one "key = value" of a git config file, with where it lies in
// the file's bytes, so that it can be cut out and the rest left
// byte-identical.
type Entry struct {
	// Section and Name are lowercase, as git compares them; Subsection
	// keeps its case ([remote "Origin"]) unless it was written in the
	// legacy form [section.sub], which git lowercases.
	Section, Subsection, Name string
	// Value is the value after unquoting and escapes; HasValue is false
	// for a key written without "=" (a boolean true).
	Value    string
	HasValue bool
	// Start and End are the byte offsets of the entry in the file: from
	// its key's first byte to just after its value (continuation lines
	// included), never its comment or its line's end.
	Start, End int
}

// Key is the entry's key as `git config --list` spells it:
// section[.subsection].name.
func (e Entry) Key() string {
	if e.Section == "" {
		// Before any section header: git lists the bare name, which no
		// section's key matches.
		return e.Name
	}
	if e.Subsection != "" {
		return e.Section + "." + e.Subsection + "." + e.Name
	}
	return e.Section + "." + e.Name
}

// ParseConfig parses the text of a git config file as git's own parser
// (config.c) does: sections and subsections (quoted, or the legacy
// [section.sub]), keys case-insensitive, values with quotes, the escapes
// \n \t \b \" \\, backslash-newline continuation, # and ; comments, an
// entry on a section's line, CRLF line ends and a leading UTF-8 BOM. Text
// git would refuse is an error: a caller must then treat the whole file
// as unknown, never as empty.
func ParseConfig(data []byte) ([]Entry, error) {
	p := configParser{data: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	return p.parse()
}

type configParser struct {
	data []byte
	pos  int
	// section and subsection are the current section's.
	section, subsection string
}

// next returns the next byte, git's get_next_char: "\r\n" reads as "\n";
// -1 at the end.
func (p *configParser) next() int {
	if p.pos >= len(p.data) {
		return -1
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		return '\n'
	}
	return int(c)
}

func (p *configParser) errorf(format string, args ...any) error {
	line := 1 + bytes.Count(p.data[:min(p.pos, len(p.data))], []byte("\n"))
	return fmt.Errorf("config line %d: %s", line, fmt.Sprintf(format, args...))
}

func isSpace(c int) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

func isAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c int) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c int) byte {
	if c >= 'A' && c <= 'Z' {
		return byte(c - 'A' + 'a')
	}
	return byte(c)
}

func (p *configParser) parse() ([]Entry, error) {
	var entries []Entry
	comment := false
	for {
		c := p.next()
		switch {
		case c == -1:
			return entries, nil
		case c == '\n':
			comment = false
		case comment || isSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			if err := p.sectionHeader(); err != nil {
				return nil, err
			}
		case isAlpha(c):
			e, err := p.entry(c)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		default:
			return nil, p.errorf("unexpected %q", rune(c))
		}
	}
}

// sectionHeader parses what follows "[": git's get_base_var.
func (p *configParser) sectionHeader() error {
	var name strings.Builder
	for {
		c := p.next()
		switch {
		case c == -1:
			return p.errorf("unterminated section header")
		case c == ']':
			p.section, p.subsection = name.String(), ""
			if name.Len() == 0 {
				return p.errorf("empty section name")
			}
			// The legacy [section.sub] is lowercased whole; its first dot
			// parts section from subsection.
			if sec, sub, ok := strings.Cut(p.section, "."); ok {
				p.section, p.subsection = sec, sub
			}
			return nil
		case isSpace(c):
			return p.extendedHeader(name.String())
		case isKeyChar(c) || c == '.':
			name.WriteByte(lower(c))
		default:
			return p.errorf("bad character %q in a section name", rune(c))
		}
	}
}

// extendedHeader parses `"sub"]` after `[section `: git's
// get_extended_base_var.
func (p *configParser) extendedHeader(section string) error {
	c := p.next()
	for isSpace(c) && c != '\n' {
		c = p.next()
	}
	if c != '"' {
		return p.errorf("expected a quoted subsection")
	}
	var sub strings.Builder
	for {
		c = p.next()
		switch c {
		case -1, '\n':
			return p.errorf("unterminated subsection")
		case '"':
			if p.next() != ']' {
				return p.errorf("expected ] after the subsection")
			}
			if section == "" {
				return p.errorf("empty section name")
			}
			p.section, p.subsection = section, sub.String()
			return nil
		case '\\':
			c = p.next()
			if c == -1 || c == '\n' {
				return p.errorf("unterminated subsection")
			}
		}
		sub.WriteByte(byte(c))
	}
}

// entry parses a key, whose first byte first was just read, and its
// value: git's get_value and parse_value.
func (p *configParser) entry(first int) (Entry, error) {
	e := Entry{Section: p.section, Subsection: p.subsection, Start: p.pos - 1}
	var name strings.Builder
	name.WriteByte(lower(first))
	e.End = p.pos
	c := p.next()
	for ; c != -1 && isKeyChar(c); c = p.next() {
		name.WriteByte(lower(c))
		e.End = p.pos
	}
	e.Name = name.String()
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	switch c {
	case -1:
		return e, nil
	case '\n':
		p.unread()
		return e, nil
	case '=':
	default:
		// git takes nothing else after a key, not even a comment.
		return e, p.errorf("bad key %q", e.Name)
	}
	e.HasValue = true
	value, end, err := p.value()
	if err != nil {
		return e, err
	}
	e.Value, e.End = value, end
	return e, nil
}

// unread steps back over the line end just read ("\n" or "\r\n").
func (p *configParser) unread() {
	if p.pos >= 2 && p.data[p.pos-1] == '\n' && p.data[p.pos-2] == '\r' {
		p.pos -= 2
		return
	}
	p.pos--
}

// value parses a value after "=", up to the line's end, which it leaves
// unread, and returns it with the offset just after its last byte that
// is not a comment or trailing blank.
func (p *configParser) value() (string, int, error) {
	var v strings.Builder
	quoted, comment := false, false
	spaces := 0 // blanks outside quotes, written only if more follows
	end := p.pos
	for {
		c := p.next()
		if c == -1 || c == '\n' {
			if quoted {
				return "", 0, p.errorf("unterminated quoted value")
			}
			if c == '\n' {
				p.unread()
			}
			return v.String(), end, nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quoted {
			if v.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v.WriteByte(' ')
		}
		switch c {
		case '\\':
			c = p.next()
			switch c {
			case -1:
				// git reads the end of the file as a line end: a final
				// backslash continues into nothing.
				if quoted {
					return "", 0, p.errorf("unterminated quoted value")
				}
				return v.String(), p.pos, nil
			case '\n':
				end = p.pos
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", 0, p.errorf("bad escape in a value")
			}
			v.WriteByte(byte(c))
		case '"':
			quoted = !quoted
		default:
			v.WriteByte(byte(c))
		}
		end = p.pos
	}
}

// removeEntries returns data without the bytes of entries (from
// ParseConfig on data): each entry's span is cut, and a line left with
// nothing but blanks is removed whole. Every other byte stays as it was.
func removeEntries(data []byte, entries []Entry) ([]byte, error) {
	var out []byte
	at := 0
	for _, e := range entries {
		if e.Start < at || e.End > len(data) || e.Start > e.End {
			return nil, fmt.Errorf("entries out of order")
		}
		lineStart := bytes.LastIndexByte(data[:e.Start], '\n') + 1
		lineEnd := len(data)
		if i := bytes.IndexByte(data[e.End:], '\n'); i >= 0 {
			lineEnd = e.End + i + 1
		}
		before, after := data[max(lineStart, at):e.Start], data[e.End:lineEnd]
		if lineStart >= at && blank(before) && blank(after) {
			out = append(out, data[at:lineStart]...)
			at = lineEnd
			continue
		}
		out = append(out, data[at:e.Start]...)
		at = e.End
	}
	return append(out, data[at:]...), nil
}

// blank says whether b holds only spaces, tabs and a line end.
func blank(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}
