//go:build unix

package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
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

// TestListDirEntriesAndOpenFile: Entries gives each name with the type
// its folder gives, and OpenFile opens a regular file by handle, denies
// a deny_read name before opening it and a secret's hard link on what it
// opened, never follows a symlink and refuses anything but a regular
// file.
func TestListDirEntriesAndOpenFile(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "ws/s/a.txt", "ws/s/sub/", "ws/s/key.pem", "ws/s/link => a.txt", "home/.ssh/id")
	if err := os.Link(filepath.Join(root, "home/.ssh/id"), filepath.Join(root, "ws/s/id-link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "ws/s/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := readFence(t, root, "*.pem", "~/.ssh/**")
	target, err := f.Resolve("s")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.OpenList("grep", target)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	entries, err := d.Entries()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	want := []DirEntry{{"a.txt", EntryFile}, {"fifo", EntryOther}, {"id-link", EntryFile},
		{"key.pem", EntryFile}, {"link", EntrySymlink}, {"sub", EntryDir}}
	if !slices.Equal(entries, want) {
		t.Errorf("Entries() = %v, want %v", entries, want)
	}

	h, err := d.OpenFile("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(h)
	h.Close()
	if err != nil || h.Path != filepath.Join(root, "ws/s/a.txt") || h.Size != int64(len(data)) {
		t.Errorf("OpenFile(a.txt): %q, %v, path %s, size %d", data, err, h.Path, h.Size)
	}
	for name, code := range map[string]fserr.Code{
		"key.pem": fserr.SandboxDenied,   // by name, before any open
		"id-link": fserr.SandboxDenied,   // by identity, on what was opened
		"link":    fserr.IO,              // a symlink is not followed
		"sub":     fserr.InvalidArgument, // not a regular file
		"fifo":    fserr.InvalidArgument, // opened without blocking, refused
		"gone":    fserr.NotFound,
	} {
		h, err := d.OpenFile(name)
		if h != nil {
			h.Close()
		}
		if fserr.CodeOf(err) != code {
			t.Errorf("OpenFile(%s): %v, want %s", name, err, code)
		}
	}
}

// TestListDirReadsBackWhereARuleCouldApply: a subfolder opened in a
// listed folder is read back through /proc/self/fd only where a deny_read
// rule could apply to it (issue 26): there the read-back still decides,
// and the real path it gives is denied. The listed folder r is moved
// beneath an anchored glob's cover after it was opened, as only a
// process outside dsh-fs could move it: its subfolder a, above the
// glob's folder, is read back and denied; plain, which no rule could
// apply to, is judged by the path walked, without a read-back.
func TestListDirReadsBackWhereARuleCouldApply(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "ws/r/a/", "ws/r/plain/", "ws/r/x.txt")
	f := readFence(t, root, "$ROOT/ws/r/a/vault/**")
	target, err := f.Resolve("r")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.OpenList("find", target)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	before := readBacks.Load()
	plain, err := d.Open("plain")
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	if n := readBacks.Load() - before; n != 0 {
		t.Errorf("a subfolder no rule could apply to was read back %d times", n)
	}

	ws := filepath.Join(root, "ws")
	for _, step := range [][2]string{{"r", "moved"}, {"", "r/a/vault"}, {"moved", "r/a/vault/r"}} {
		if step[0] == "" {
			if err := os.MkdirAll(filepath.Join(ws, step[1]), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Rename(filepath.Join(ws, step[0]), filepath.Join(ws, step[1])); err != nil {
			t.Fatal(err)
		}
	}
	before = readBacks.Load()
	a, err := d.Open("a")
	if err == nil {
		a.Close()
	}
	if n := readBacks.Load() - before; n != 1 {
		t.Errorf("a subfolder above an anchored glob's folder was read back %d times, want 1", n)
	}
	if de := deniedAs(t, err); de.Reason != policy.ReasonDenyRead {
		t.Errorf("Open(a) once its real path is covered: %v, want deny_read", err)
	}
}
