//go:build unix

package tty

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestParseRefusal: the refusals the common tools print name their path
// and error; lines that only look alike name none.
func TestParseRefusal(t *testing.T) {
	for _, c := range []struct {
		line  string
		path  string
		errno unix.Errno
	}{
		{"touch: cannot touch 'x': Read-only file system\n", "x", unix.EROFS},
		{"touch: cannot touch '/out/a b': Read-only file system\r\n", "/out/a b", unix.EROFS},
		{"mkdir: cannot create directory ‘/etc/x’: Read-only file system\n", "/etc/x", unix.EROFS},
		{"bash: .git/hooks/pre-commit: Read-only file system\n", ".git/hooks/pre-commit", unix.EROFS},
		{"bash: line 1: /out/y: Read-only file system", "/out/y", unix.EROFS},
		{"rm: cannot remove '.git/hooks': Device or resource busy\n", ".git/hooks", unix.EBUSY},
		{"error: could not lock config file .git/config: Read-only file system\n", ".git/config", unix.EROFS},
		{"fatal: cannot mkdir '/out/z': Permission denied\n", "/out/z", unix.EACCES},
		{"open /out/w.txt: read-only file system\n", "/out/w.txt", unix.EROFS},
		{"main.go:12: open out.txt: permission denied\n", "out.txt", unix.EACCES},
		{"PermissionError: [Errno 30] Read-only file system: '/out/p'\n", "/out/p", unix.EROFS},
		{"OSError: [Errno 1] Operation not permitted: 'q'\n", "q", unix.EPERM},
		{"chmod: changing permissions of '/etc/passwd': Operation not permitted\n", "/etc/passwd", unix.EPERM},
		{"\x1b[31merror:\x1b[m could not lock config file .git/config: Read-only file system\n", ".git/config", unix.EROFS},
	} {
		r, ok := ParseRefusal([]byte(c.line))
		if !ok || r.Path != c.path || r.Errno != c.errno {
			t.Errorf("%q: got %+v %v; want %q %v", c.line, r, ok, c.path, c.errno)
		}
	}
	for _, line := range []string{
		"Read-only file system\n",
		"mount: /mnt: Read-only file system is not what we expected\n",
		"touch: cannot touch 'x': No such file or directory\n",
		"bash: : Permission denied\n",
		"all good\n",
		strings.Repeat("a", MaxLine) + ": Read-only file system\n",
	} {
		if r, ok := ParseRefusal([]byte(line)); ok {
			t.Errorf("%.60q: got %+v; want no refusal", line, r)
		}
	}
}

// TestLineScanner: every byte passes as it came, in pieces or not, and the
// explanation follows the line it explains, ended as that line was; a
// line longer than MaxLine is not read.
func TestLineScanner(t *testing.T) {
	explain := func(r Refusal) []byte { return []byte("[sandbox: " + r.Path + "]") }
	in := "one\ntouch: cannot touch 'a': Read-only file system\r\ntwo\n" + strings.Repeat("b", MaxLine+10) + ": Read-only file system\nbash: c: Read-only file system\n"
	want := "one\ntouch: cannot touch 'a': Read-only file system\r\n[sandbox: a]\r\ntwo\n" + strings.Repeat("b", MaxLine+10) + ": Read-only file system\nbash: c: Read-only file system\n[sandbox: c]\n"
	for _, size := range []int{1, 3, 7, 100, len(in)} {
		s := &LineScanner{Explain: explain}
		var out bytes.Buffer
		for p := []byte(in); len(p) > 0; {
			n := min(size, len(p))
			s.Copy(p[:n], func(b []byte) error { out.Write(b); return nil })
			p = p[n:]
		}
		if out.String() != want {
			t.Errorf("pieces of %d: got\n%q\nwant\n%q", size, out.String(), want)
		}
	}
}
