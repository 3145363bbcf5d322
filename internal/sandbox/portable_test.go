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
	for _, replaces := range []bool{false, true} {
		tmp, err := d.TempFile("g", replaces, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if tmp.name == "" || replaces && tmp.name != stagingName("g") {
			t.Errorf("TempFile(g, replaces %v) made %q", replaces, tmp.name)
		}
		tmp.Discard()
	}
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

// TestPortableHandles: openHandle makes a handle on each kind of object
// as macOS must without O_PATH, each the object itself: a folder, a
// regular file, the link itself for a symlink (dangling or not), and a
// fifo with no writer, opened without blocking. A missing name is
// ENOENT, and a handle asked to be a folder on a file is ENOTDIR.
func TestPortableHandles(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "d/", "f", "l => f", "dl => nope")
	if err := unix.Mkfifo(filepath.Join(root, "p"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := openRead(unix.AT_FDCWD, root, oPath|unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dir)
	for _, tc := range []struct {
		name  string
		flags int
		typ   uint32
		err   error
	}{
		{"d", oPath, unix.S_IFDIR, nil},
		{"d", oPath | unix.O_DIRECTORY, unix.S_IFDIR, nil},
		{"f", oPath, unix.S_IFREG, nil},
		{"l", oPath, unix.S_IFLNK, nil},
		{"dl", oPath, unix.S_IFLNK, nil},
		{"p", oPath, unix.S_IFIFO, nil},
		{"nope", oPath, 0, unix.ENOENT},
		{"f", oPath | unix.O_DIRECTORY, 0, unix.ENOTDIR},
	} {
		fd, err := openHandle(dir, tc.name, tc.flags)
		if err != nil {
			if !errors.Is(err, tc.err) || tc.err == nil {
				t.Errorf("openHandle(%s, %#x) = %v, want %v", tc.name, tc.flags, err, tc.err)
			}
			continue
		}
		var st, want unix.Stat_t
		serr := unix.Fstat(fd, &st)
		unix.Close(fd)
		if tc.err != nil {
			t.Errorf("openHandle(%s, %#x) opened it, want %v", tc.name, tc.flags, tc.err)
			continue
		}
		if serr != nil || unix.Lstat(filepath.Join(root, tc.name), &want) != nil || uint32(st.Mode&unix.S_IFMT) != tc.typ || st.Ino != want.Ino {
			t.Errorf("openHandle(%s, %#x): type %#o inode %d, want %#o inode %d", tc.name, tc.flags, st.Mode&unix.S_IFMT, st.Ino, tc.typ, want.Ino)
		}
	}
}
