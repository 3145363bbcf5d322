package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/fserr"
)

// TestListDir lists a folder by handle: names unsorted and unlooked-at,
// entries under deny_read (by path, by folder entry, by identity) denied,
// symlinks described and never opened as folders, and a folder swapped
// for a symlink after its look refused rather than followed.
func TestListDir(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "ws/list/a.txt", "ws/list/sub/b", "ws/list/secret/k", "ws/list/out => ../../out",
		"home/.ssh/id", "ws/list/gone/")
	f := readFence(t, root, "secret", "~/.ssh/**")
	if err := os.Link(filepath.Join(root, "home/.ssh/id"), filepath.Join(root, "ws/list/id-link")); err != nil {
		t.Fatal(err)
	}
	target, err := f.Resolve("list")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.OpenList("ls", target)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Path != filepath.Join(root, "ws/list") {
		t.Errorf("Path %q", d.Path)
	}
	names, err := d.Names()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"a.txt", "gone", "id-link", "out", "secret", "sub"}; !slices.Equal(names, want) {
		t.Errorf("Names() = %v, want %v", names, want)
	}

	// By path, without a look.
	if !d.Hidden("secret") || d.Hidden("a.txt") || d.Hidden("id-link") {
		t.Errorf("Hidden: secret %v, a.txt %v, id-link %v", d.Hidden("secret"), d.Hidden("a.txt"), d.Hidden("id-link"))
	}
	// By path and by identity, with a look.
	for _, name := range []string{"secret", "id-link"} {
		if _, err := d.Lstat(name); fserr.CodeOf(err) != fserr.SandboxDenied {
			t.Errorf("Lstat(%s): %v, want a denial", name, err)
		}
	}
	st, err := d.Lstat("out")
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK || st.Target != "../../out" {
		t.Errorf("Lstat(out) = mode %o target %q, %v", st.Mode, st.Target, err)
	}
	if st, err := d.Lstat("sub"); err != nil || !st.IsDir() {
		t.Errorf("Lstat(sub): %v, %v", st.IsDir(), err)
	}
	if _, err := d.Lstat("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat(nope): %v", err)
	}

	// A symlink is never opened as a folder.
	if sub, err := d.Open("out"); err == nil || fserr.CodeOf(err) != fserr.IO {
		if sub != nil {
			sub.Close()
		}
		t.Errorf("Open(out): %v, want FS_IO", err)
	}
	// A folder swapped for a symlink to a secret after its look.
	if err := os.Remove(filepath.Join(root, "ws/list/gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../home/.ssh", filepath.Join(root, "ws/list/gone")); err != nil {
		t.Fatal(err)
	}
	if sub, err := d.Open("gone"); err == nil || fserr.CodeOf(err) != fserr.IO {
		if sub != nil {
			sub.Close()
		}
		t.Errorf("Open(gone): %v, want FS_IO", err)
	}

	sub, err := d.Open("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Path != filepath.Join(root, "ws/list/sub") {
		t.Errorf("sub.Path %q", sub.Path)
	}
	if names, err := sub.Names(); err != nil || !slices.Equal(names, []string{"b"}) {
		t.Errorf("sub.Names() = %v, %v", names, err)
	}
}

// TestOpenListDenied: a folder under deny_read, or reached through a
// symlink into one, is denied; a file is FS_NOT_DIR.
func TestOpenListDenied(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "home/.ssh/id", "ws/keys => ../home/.ssh")
	f := readFence(t, root, "~/.ssh")
	for path, code := range map[string]fserr.Code{
		"$ROOT/home/.ssh": fserr.SandboxDenied,
		"keys":            fserr.SandboxDenied,
		"f":               fserr.NotDir,
	} {
		target, err := f.Resolve(expandRoot(path, root))
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.OpenList("ls", target)
		if fserr.CodeOf(err) != code {
			if d != nil {
				d.Close()
			}
			t.Errorf("OpenList(%s): %v, want %s", path, err, code)
		}
	}
}
