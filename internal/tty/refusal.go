//go:build unix

package tty

import (
	"bytes"
	"strings"

	"golang.org/x/sys/unix"
)

// A refusal in the shell explains itself (docs/design.md §10): the
// supervisor reads what it relays of the session's output (the terminal's,
// and exec's standard error where it is a pipe: StderrRelay) line by line,
// and a line that is a command's refusal of a path ("Read-only file
// system", "Device or resource busy", "Permission denied", "Operation not
// permitted") is given to the caller, who may answer with a line of its
// own, written right after it. What the session prints is its own to
// choose: a line here is only ever a claim, which the caller checks
// against the policy before it says anything, and says only the policy.

// MaxLine is the longest line a LineScanner reads: a longer one passes
// unread.
const MaxLine = 4 << 10

// Refusal is a refusal a command printed: the path it names, as printed,
// and the error.
type Refusal struct {
	Path  string
	Errno unix.Errno
}

// refusalTexts are the errors' messages as the C library (strerror) and
// Go (lower case) print them.
var refusalTexts = []struct {
	text  string
	errno unix.Errno
}{
	{"Read-only file system", unix.EROFS},
	{"Device or resource busy", unix.EBUSY},
	{"Permission denied", unix.EACCES},
	{"Operation not permitted", unix.EPERM},
}

// ParseRefusal reads line (one line, with or without its line break) as a
// command's refusal of a path. It knows the shapes the common tools print:
//
//	touch: cannot touch 'x': Read-only file system      (coreutils; ‘x’ too)
//	bash: x: Read-only file system                     (a redirection)
//	error: could not lock config file .git/config: Read-only file system
//	fatal: cannot mkdir '.git/x': Permission denied    (git)
//	open x: read-only file system                      (Go's *PathError)
//	[Errno 30] Read-only file system: 'x'              (Python's OSError)
func ParseRefusal(line []byte) (Refusal, bool) {
	if len(line) > MaxLine {
		return Refusal{}, false
	}
	s := strings.TrimRight(string(stripCSI(line)), "\r\n")
	for _, t := range refusalTexts {
		for _, text := range []string{t.text, strings.ToLower(t.text)} {
			if p, ok := refusedPath(s, text); ok {
				return Refusal{Path: p, Errno: t.errno}, true
			}
		}
	}
	return Refusal{}, false
}

// refusedPath finds the path s refuses with the message text.
func refusedPath(s, text string) (string, bool) {
	// Python: the message first, the path after it, quoted.
	if i := strings.Index(s, "] "+text+": "); i >= 0 && strings.Contains(s[:i], "[Errno ") {
		p, _, ok := quoted(s[i+len("] "+text+": "):])
		return p, ok && p != ""
	}
	head, ok := strings.CutSuffix(s, ": "+text)
	if !ok {
		return "", false
	}
	// The path quoted last before the message: coreutils, git.
	if p, ok := lastQuoted(head); ok {
		return p, p != ""
	}
	// Unquoted: the last field of the last ": "-part (bash's "bash: x",
	// Go's "open x", git's "could not lock config file x").
	if i := strings.LastIndex(head, ": "); i >= 0 {
		head = head[i+2:]
	}
	if i := strings.LastIndexByte(head, ' '); i >= 0 {
		head = head[i+1:]
	}
	return head, head != "" && !strings.ContainsAny(head, "'\"‘’`")
}

// The quotes a path is printed in: coreutils' 'x' and ‘x’, and "x".
var quotePairs = [][2]string{{"'", "'"}, {"‘", "’"}, {"\"", "\""}, {"`", "'"}}

// quoted reads a quoted string at the start of s: its text, what follows.
func quoted(s string) (string, string, bool) {
	for _, q := range quotePairs {
		if rest, ok := strings.CutPrefix(s, q[0]); ok {
			if i := strings.Index(rest, q[1]); i >= 0 {
				return rest[:i], rest[i+len(q[1]):], true
			}
		}
	}
	return "", "", false
}

// lastQuoted reads the quoted string that ends s.
func lastQuoted(s string) (string, bool) {
	for _, q := range quotePairs {
		rest, ok := strings.CutSuffix(s, q[1])
		if !ok {
			continue
		}
		if i := strings.LastIndex(rest, q[0]); i >= 0 {
			return rest[i+len(q[0]):], true
		}
	}
	return "", false
}

// stripCSI returns line without its control sequences (colours): ESC [
// up to the final byte.
func stripCSI(line []byte) []byte {
	if bytes.IndexByte(line, 0x1b) < 0 {
		return line
	}
	out := make([]byte, 0, len(line))
	for i := 0; i < len(line); i++ {
		if line[i] == 0x1b && i+1 < len(line) && line[i+1] == '[' {
			j := i + 2
			for j < len(line) && (line[j] < 0x40 || line[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, line[i])
	}
	return out
}

// LineScanner passes a stream through, reading it line by line: after
// each line ParseRefusal recognises, it writes what Explain answers (a
// line without its break; nil for none), ended as the refused line was
// ("\r\n" on a terminal). A line longer than MaxLine is passed unread;
// nothing is held back: every byte is written as it comes.
type LineScanner struct {
	Explain func(Refusal) []byte
	line    []byte
	over    bool
}

// Copy writes p with write, and the explanations after the lines they
// explain. It stops at write's first error.
func (s *LineScanner) Copy(p []byte, write func([]byte) error) error {
	if s == nil || s.Explain == nil {
		return write(p)
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			return write(p)
		}
		s.keep(p[:i+1])
		if err := write(p[:i+1]); err != nil {
			return err
		}
		p = p[i+1:]
		line, over := s.line, s.over
		s.line, s.over = s.line[:0], false
		if over {
			continue
		}
		r, ok := ParseRefusal(line)
		if !ok {
			continue
		}
		if add := s.Explain(r); add != nil {
			end := "\n"
			if bytes.HasSuffix(line, []byte("\r\n")) {
				end = "\r\n"
			}
			if err := write(append(add, end...)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keep adds b to the line being read, up to MaxLine.
func (s *LineScanner) keep(b []byte) {
	if s.over {
		return
	}
	if len(s.line)+len(b) > MaxLine+2 {
		s.over, s.line = true, s.line[:0]
		return
	}
	s.line = append(s.line, b...)
}
