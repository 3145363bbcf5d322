package kernel

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// OpenedPath reads a descriptor back through the cached /proc/self/fd
// handle: what it says is what thread-self says, it follows a folder
// renamed after the open, and a descriptor that is not open is an error,
// never a path.
func TestOpenedPathThroughSelfFd(t *testing.T) {
	if _, err := procSelfFd(); err != nil {
		t.Skipf("no verified /proc/self/fd here: %v", err)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.Mkdir(a, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(a, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	readThreadSelf := func() string {
		proc, err := ProcRoot()
		if err != nil {
			t.Fatal(err)
		}
		var buf [unix.PathMax]byte
		n, err := unix.Readlinkat(proc, "thread-self/fd/"+strconv.Itoa(fd), buf[:])
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	got, err := OpenedPath(fd)
	if err != nil || got != a || got != readThreadSelf() {
		t.Fatalf("openedPath = %q, %v; want %q (thread-self: %q)", got, err, a, readThreadSelf())
	}
	b := filepath.Join(dir, "b")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if got, err := OpenedPath(fd); err != nil || got != b {
		t.Fatalf("after the rename, openedPath = %q, %v; want %q", got, err, b)
	}
	closed, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(closed)
	if got, err := OpenedPath(closed); err == nil {
		t.Fatalf("openedPath of a closed descriptor = %q, want an error", got)
	}
}
