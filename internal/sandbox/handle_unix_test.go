//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLinkByName: macOS's way to read a link through its handle
// (linkByName) gives the link's text; a link put in its place between
// the read-back and the read is EAGAIN; a handle on anything else is
// EINVAL. It runs on Linux with /proc as the read-back.
func TestLinkByName(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "ws/l => target", "ws/m => other", "ws/f")
	link := filepath.Join(root, "ws/l")
	open := func(p string) int {
		t.Helper()
		fd, err := openRead(unix.AT_FDCWD, p, oPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	fd := open(link)
	if got, err := linkByName(fd, readBack); err != nil || got != "target" {
		t.Errorf("linkByName = %q, %v; want target", got, err)
	}
	swapAfter := func(fd int) (string, error) {
		p, err := readBack(fd)
		if rerr := os.Rename(filepath.Join(root, "ws/m"), link); rerr != nil {
			t.Fatal(rerr)
		}
		return p, err
	}
	if got, err := linkByName(fd, swapAfter); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("after a swap: linkByName = %q, %v; want EAGAIN", got, err)
	}
	if got, err := linkByName(open(filepath.Join(root, "ws/f")), readBack); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a file: linkByName = %q, %v; want EINVAL", got, err)
	}
}

// TestCString: F_GETPATH's buffer is read up to its NUL; one without a
// NUL or an empty path is an error.
func TestCString(t *testing.T) {
	for _, tc := range []struct {
		buf  string
		want string
		err  error
	}{
		{"/a/b\x00junk", "/a/b", nil},
		{"/a/b", "", unix.ENAMETOOLONG},
		{"\x00", "", unix.ENOENT},
	} {
		got, err := cString([]byte(tc.buf))
		if got != tc.want || !errors.Is(err, tc.err) && err != tc.err {
			t.Errorf("cString(%q) = %q, %v; want %q, %v", tc.buf, got, err, tc.want, tc.err)
		}
	}
}
