//go:build darwin || (linux && dshportable)

package sandbox

import (
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPortableBuild: the portable build has every Linux accelerator off:
// Accelerated says so, openat2's one-call walk answers nothing, and a
// temp file cannot be unnamed (TempFile names it).
func TestPortableBuild(t *testing.T) {
	if Accelerated() {
		t.Fatal("Accelerated() in the portable build")
	}
	root := tempRoot(t)
	makeLayout(t, root, canonLayout...)
	if w, ok := walkAtOnce(filepath.Join(root, "ws/d/g"), walkSpec{flags: unix.O_RDONLY, followLast: true}); ok {
		unix.Close(w.fd)
		t.Error("walkAtOnce opened a path: openat2 is on")
	}
	if fd, err := openUnnamed(unix.AT_FDCWD, 0o600); !errors.Is(err, errors.ErrUnsupported) {
		if err == nil {
			unix.Close(fd)
		}
		t.Errorf("openUnnamed = %d, %v; want ErrUnsupported", fd, err)
	}
	d := openTestDir(t, root, "d/new")
	tmp, err := d.TempFile(0o644)
	if err != nil {
		t.Fatal(err)
	}
	if tmp.name == "" {
		t.Error("TempFile made an unnamed file")
	}
	tmp.Discard()
	if got := dirEntries(t, filepath.Join(root, "ws/d")); len(got) != 1 || got[0] != "g" {
		t.Errorf("the folder holds %v after Discard, want [g]", got)
	}
}

// TestPortableWalkCatchesSwapMidWalk: a folder of the path swapped for a
// symlink out of the workspace while the component walk is under way
// (after it opened the folder above, before it reaches the name) is
// refused, and nothing outside is opened. A plain open(2) of the same
// path after the same swap lands outside: the case can fail.
func TestPortableWalkCatchesSwapMidWalk(t *testing.T) {
	for _, naive := range []bool{false, true} {
		root := tempRoot(t)
		makeLayout(t, root, canonLayout...)
		makeLayout(t, root, "out/g")
		ws, path := filepath.Join(root, "ws"), filepath.Join(root, "ws/d/g")
		if naive {
			swapEntry(t, root, "ws/d => ../out")
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatalf("the naive open failed (%v): the case cannot fail", err)
			}
			got, _ := readBack(fd)
			unix.Close(fd)
			if Beneath(ws, got) {
				t.Fatalf("the naive open stayed in the workspace (%s): the case cannot fail", got)
			}
			continue
		}
		swapped := false
		w, err := walkPath(path, walkSpec{flags: unix.O_RDONLY, noSymlinks: true, folder: func(_ int, p string) error {
			if p == ws && !swapped {
				swapped = true
				swapEntry(t, root, "ws/d => ../out")
			}
			return nil
		}})
		if !swapped {
			t.Fatal("the walk never reached the workspace: nothing was swapped")
		}
		if err == nil {
			got, _ := readBack(w.fd)
			unix.Close(w.fd)
			t.Fatalf("the walk opened %s (read back %s) through the swapped symlink", w.path, got)
		}
		if !errors.Is(err, unix.ELOOP) {
			t.Errorf("err = %v, want ELOOP", err)
		}
	}
}
