package sandbox

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// eachWalk runs the case f twice: with the resolver's one-call openat2
// path allowed, and with the component walk alone, as on a kernel
// without openat2. Both must give the same answers.
func eachWalk(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name+"/openat2", f)
	t.Run(name+"/components", func(t *testing.T) {
		noOpenat2.Store(true)
		t.Cleanup(func() { noOpenat2.Store(false) })
		f(t)
	})
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
		{path: ws + "/d/lg", spec: walkSpec{flags: unix.O_PATH, noSymlinks: true}},
		// Without following it, the last link is the object itself.
		{path: ws + "/d/lg", spec: walkSpec{flags: unix.O_PATH}, ok: true, want: ws + "/d/lg"},
		{path: ws + "/d/new", spec: walkSpec{flags: unix.O_PATH, followLast: true, keepMissing: true}, ok: true, want: ws + "/d/new"},
		{path: ws + "/d/new/deeper", spec: walkSpec{flags: unix.O_PATH, followLast: true, keepMissing: true}},
		{path: ws + "/nope", spec: walkSpec{flags: unix.O_RDONLY, followLast: true}},
		{path: "/proc/self/root/etc", spec: walkSpec{flags: unix.O_PATH, followLast: true}},
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
