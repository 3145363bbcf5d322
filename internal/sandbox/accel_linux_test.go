//go:build linux && !dshportable

package sandbox

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenat2Refused: whatever openat2 answers (a retry asked for without
// end, a signal, ENOSYS or EPERM from a seccomp filter, a loop), the
// resolver is never held up by it: the component walk gives the answer
// the one-call path would have given. ENOSYS turns the one-call path off
// for the rest of the process.
func TestOpenat2Refused(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, canonLayout...)
	for _, errno := range []unix.Errno{unix.EAGAIN, unix.EINTR, unix.EPERM, unix.ELOOP, unix.ENOSYS} {
		t.Run(errno.Error(), func(t *testing.T) {
			calls := 0
			refused := func(int, string, *unix.OpenHow) (int, error) {
				calls++
				return -1, errno
			}
			t.Cleanup(func() { noOpenat2.Store(false) })
			for range 2 {
				w, err := walkPath(root+"/ws/d/g", walkSpec{flags: unix.O_RDONLY, followLast: true, openat2: refused})
				if err != nil || w.path != root+"/ws/d/g" {
					t.Fatalf("walkPath = %q, %v; want the file", w.path, err)
				}
				unix.Close(w.fd)
			}
			want := 2
			if errno == unix.ENOSYS {
				want = 1
			}
			if calls != want {
				t.Errorf("openat2 called %d times, want %d", calls, want)
			}
		})
	}
}

// TestWalkAtOnce: a path with no symlink in it is opened in one openat2
// call, and one with a symlink anywhere, the last component included
// where it is to be followed, is left to the component walk (false), so
// the one-call path never decides on a link.
func TestWalkAtOnce(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, canonLayout...)
	makeLayout(t, root, "ws/l => d", "ws/d/lg => g")
	ws := filepath.Join(root, "ws")
	for _, tc := range []struct {
		path string
		spec walkSpec
		ok   bool
		want string
	}{
		{path: ws + "/d/g", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}, ok: true, want: ws + "/d/g"},
		{path: ws + "/d/../f", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}, ok: true, want: ws + "/f"},
		{path: ws + "/d/", spec: walkSpec{flags: unix.O_RDONLY | unix.O_DIRECTORY, followLast: true}, ok: true, want: ws + "/d"},
		{path: ws + "/l/g", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}},
		{path: ws + "/d/lg", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}},
		{path: ws + "/d/lg", spec: walkSpec{flags: oPath, noSymlinks: true}},
		// Without following it, the last link is the object itself.
		{path: ws + "/d/lg", spec: walkSpec{flags: oPath}, ok: true, want: ws + "/d/lg"},
		{path: ws + "/d/new", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}, ok: true, want: ws + "/d/new"},
		// A new tree: the folder above it that exists, its names missing.
		{path: ws + "/d/new/deeper", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}, ok: true, want: ws + "/d/new/deeper"},
		{path: ws + "/d/a/b/c/", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}, ok: true, want: ws + "/d/a/b/c"},
		{path: ws + "/d/./new/deeper", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}, ok: true, want: ws + "/d/new/deeper"},
		// A symlink above the missing names, one where a name is, a file
		// where a folder is, a "." or ".." among them: the component walk's.
		{path: ws + "/l/new/deeper", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/d/lg/new", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/f/new/deeper", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/d/new/../x", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/d/new/./x", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/d/1/2/3/4/5/6/7/8/9", spec: walkSpec{flags: oPath, followLast: true, keepMissing: true}},
		{path: ws + "/nope", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}},
		{path: "/proc/self/root/etc", spec: walkSpec{flags: oPath, followLast: true}},
	} {
		w, ok := walkAtOnce(tc.path, tc.spec)
		if ok {
			unix.Close(w.fd)
		}
		if ok != tc.ok || ok && w.canonical() != tc.want {
			t.Errorf("walkAtOnce(%q, %+v) = %q, %v; want %q, %v", tc.path, tc.spec, w.canonical(), ok, tc.want, tc.ok)
		}
	}
}
