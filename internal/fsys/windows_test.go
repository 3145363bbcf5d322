//go:build windows

package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/dshfs/dsh-fs/internal/fsys/fsystest"
)

// These run as a Windows program: on this project's Linux machines under
// Wine (GOOS=windows go test -exec …/wine-exec ./internal/fsys), which
// approximates Windows; what Wine lacks skips with the reason.

// tempFolder is a new folder, its fence path, and its handle.
func tempFolder(t *testing.T) (osPath, fencePath string, fd int) {
	t.Helper()
	osPath = tempDir(t)
	fencePath, err := FromOS(osPath)
	if err != nil {
		t.Fatalf("FromOS(%q): %v", osPath, err)
	}
	fd, err = Open(fencePath, O_PATH|O_DIRECTORY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", fencePath, err)
	}
	t.Cleanup(func() { Close(fd) })
	return osPath, fencePath, fd
}

// tempDir is t.TempDir made by hand: under Wine 8, Go's os.RemoveAll
// fails ("Invalid function": Wine lacks FileDispositionInformationEx and
// Go does not fall back), so the folder is removed here by this
// package's Unlinkat, which falls back.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fsys")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p, _ := FromOS(d)
		removeTree(p)
	})
	return d
}

// removeTree removes the folder at the fence path p and what it holds,
// as far as it can.
func removeTree(p string) {
	parent, name := p[:strings.LastIndex(p, "/")], p[strings.LastIndex(p, "/")+1:]
	pfd, err := Open(parent, O_PATH|O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer Close(pfd)
	if entries, err := os.ReadDir(ToOS(p)); err == nil {
		for _, e := range entries {
			if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				removeTree(p + "/" + e.Name())
				continue
			}
			if dfd, err := Open(p, O_PATH|O_DIRECTORY, 0); err == nil {
				if Unlinkat(dfd, e.Name(), 0) == EISDIR {
					Unlinkat(dfd, e.Name(), AT_REMOVEDIR)
				}
				Close(dfd)
			}
		}
	}
	Unlinkat(pfd, name, AT_REMOVEDIR)
}

func create(t *testing.T, dirfd int, name, data string) {
	t.Helper()
	fd, err := Openat(dirfd, name, O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW, 0o644)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func identity(t *testing.T, dirfd int, name string) Stat_t {
	t.Helper()
	var st Stat_t
	if err := Fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatalf("fstatat %s: %v", name, err)
	}
	return st
}

// TestFromOS is the path table's spellings: what the fence takes, as
// what, and what it refuses.
func TestFromOS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`C:\proj\a.txt`, "/C:/proj/a.txt"},
		{`c:/proj/a.txt`, "/C:/proj/a.txt"},
		{`C:\`, "/C:/"},
		{`\\?\C:\proj\a.txt`, "/C:/proj/a.txt"},
		{`\??\C:\proj`, "/C:/proj"},
		{`src\a.go`, "src/a.go"},
		{`\\server\share\a.txt`, ""}, // UNC: not taken (yet)
		{`\\?\UNC\server\share`, ""}, // UNC by its long form
		{`\\.\COM1`, ""},             // a device
		{`\\?\Volume{1234}\x`, ""},   // a volume by GUID
		{`C:proj`, ""},               // relative to C:'s own current folder
		{`\proj`, ""},                // rooted on no drive
		{`/proj`, ""},                // the same with a slash
		{`/c:/proj`, "/C:/proj"},     // the fence's own spelling, taken as it is
		{`/`, "/"},
		{`1:\proj`, ""}, // no drive letter
		{`C:\proj\file.txt:secret`, "/C:/proj/file.txt:secret"}, // refused when opened (TestNames)
	} {
		got, err := FromOS(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("FromOS(%q) = %q, want refused", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FromOS(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if back := ToOS(got); !strings.EqualFold(strings.TrimPrefix(tc.in, `\\?\`), back) && !strings.Contains(tc.in, "/") && !strings.HasPrefix(tc.in, `\??\`) {
			t.Errorf("ToOS(%q) = %q, want %q", got, back, tc.in)
		}
	}
}

// TestNames is the path table's names: each spelling that Windows would
// read as another file, a stream or a device is refused beneath a
// folder's handle, so no rule of the fence is passed by a spelling; a
// name in another case is the same file (same identity).
func TestNames(t *testing.T) {
	_, _, dir := tempFolder(t)
	create(t, dir, "file.txt", "secret")
	for _, name := range []string{
		"file.txt:secret", "file.txt::$DATA", "file.txt:secret:$DATA", // alternate data streams
		"file.txt.", "file.txt ", "file.txt. .", // trailing dots and spaces, which Win32 drops
		"CON", "nul", "NUL.txt", "com1", "LPT9.log", "CONOUT$", "AUX .txt", // devices
		"fi*e.txt", "file?.txt", `a"b`, "a<b", "a|b", // wildcards and what NTFS refuses
		"..", // never by name
	} {
		for _, flags := range []int{O_RDONLY | O_NOFOLLOW, O_PATH | O_NOFOLLOW, O_RDWR | O_CREAT | O_NOFOLLOW} {
			fd, err := Openat(dir, name, flags, 0o644)
			if err == nil {
				Close(fd)
				t.Errorf("open %q (flags %#x): opened, want refused", name, flags)
			}
		}
		if err := Mkdirat(dir, name, 0o755); err == nil {
			t.Errorf("mkdir %q: made, want refused", name)
		}
		if err := Renameat(dir, "file.txt", dir, name); err == nil {
			t.Errorf("rename file.txt to %q: renamed, want refused", name)
			Renameat(dir, name, dir, "file.txt")
		}
	}
	want := identity(t, dir, "file.txt")
	if got := identity(t, dir, "FILE.TXT"); got.Dev != want.Dev || got.Ino != want.Ino {
		t.Errorf("FILE.TXT is another object (%d/%d) than file.txt (%d/%d)", got.Dev, got.Ino, want.Dev, want.Ino)
	}
}

// TestIdentity: the same folder by two spellings is one object, and a
// folder whose name starts with another's is another object.
func TestIdentity(t *testing.T) {
	osPath, fencePath, dir := tempFolder(t)
	if err := Mkdirat(dir, "proj", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Mkdirat(dir, "proj2", 0o755); err != nil {
		t.Fatal(err)
	}
	proj := identity(t, dir, "proj")
	var byPath Stat_t
	if err := Lstat(fencePath+"/proj", &byPath); err != nil {
		t.Fatal(err)
	}
	if byPath.Dev != proj.Dev || byPath.Ino != proj.Ino || byPath.Mode&S_IFMT != S_IFDIR {
		t.Errorf("proj by path %+v is not proj beneath its folder %+v", byPath, proj)
	}
	if p2 := identity(t, dir, "proj2"); p2.Ino == proj.Ino && p2.Dev == proj.Dev {
		t.Errorf("proj2 has proj's identity")
	}
	// The 8.3 alias of a long name, where the volume makes one.
	long := filepath.Join(osPath, "a long folder name")
	if _, err := os.Stat(long); err == nil {
		t.Fatal("exists already")
	}
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	short := shortName(long)
	if short == "" || strings.EqualFold(short, long) {
		t.Skipf("no 8.3 alias of %q here (GetShortPathName gave %q): the alias row is not run", long, short)
	}
	fs, err := FromOS(short)
	if err != nil {
		t.Fatal(err)
	}
	var a, b Stat_t
	if err := Lstat(fs, &a); err != nil {
		t.Fatalf("lstat the alias %s: %v", fs, err)
	}
	lf, _ := FromOS(long)
	if err := Lstat(lf, &b); err != nil {
		t.Fatal(err)
	}
	if a.Dev != b.Dev || a.Ino != b.Ino {
		t.Errorf("the alias %s is another object than %s", fs, lf)
	}
	fd, err := Open(fs, O_PATH|O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fd)
	if got, err := FinalPath(fd); err != nil || !strings.EqualFold(got, lf) {
		t.Errorf("FinalPath of the alias = %q, %v; want the long name %q", got, err, lf)
	}
}

// shortName is GetShortPathName of p, "" where it fails.
func shortName(p string) string {
	u, _ := windows.UTF16PtrFromString(p)
	buf := make([]uint16, 1024)
	n, err := windows.GetShortPathName(u, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 || int(n) > len(buf) {
		return ""
	}
	return windows.UTF16ToString(buf[:n])
}

// TestChanges: the mutations beneath a folder's handle and the errors
// the fence tests.
func TestChanges(t *testing.T) {
	_, fencePath, dir := tempFolder(t)
	create(t, dir, "a", "old")
	create(t, dir, "b", "new")
	if _, err := Openat(dir, "a", O_RDWR|O_CREAT|O_EXCL, 0o644); !errors.Is(err, EEXIST) {
		t.Errorf("create a again: %v, want EEXIST", err)
	}
	if _, err := Openat(dir, "missing", O_RDONLY, 0); err != ENOENT {
		t.Errorf("open missing: %v, want ENOENT", err)
	}
	if _, err := Openat(dir, "a", O_RDONLY|O_DIRECTORY, 0); err != ENOTDIR {
		t.Errorf("open a as a folder: %v, want ENOTDIR", err)
	}
	if err := RenameNoReplace(dir, "b", dir, "a"); err != EEXIST {
		t.Errorf("rename b over a without replacing: %v, want EEXIST", err)
	}
	held, err := Openat(dir, "a", O_RDONLY, 0) // a reader holds the old file
	if err != nil {
		t.Fatal(err)
	}
	err = Renameat(dir, "b", dir, "a")
	if err == EACCES && !posixRename(t, dir) {
		// Windows before 1709, FAT, and Wine 8: no POSIX rename, so a file
		// open elsewhere cannot be replaced, even shared for delete.
		t.Logf("no POSIX rename on this volume: a replace of a file held open fails (EACCES), as Windows' own did")
		Close(held)
		err = Renameat(dir, "b", dir, "a")
	}
	if err != nil {
		t.Fatalf("rename b over a (a held open): %v", err)
	}
	Close(held)
	data, err := os.ReadFile(ToOS(fencePath + "/a"))
	if err != nil || string(data) != "new" {
		t.Errorf("a after the rename: %q, %v", data, err)
	}
	if err := Mkdirat(dir, "d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Mkdirat(dir, "d", 0o755); err != EEXIST {
		t.Errorf("mkdir d again: %v, want EEXIST", err)
	}
	create(t, dir, "d/inner", "x")
	if err := Unlinkat(dir, "d", 0); err != EISDIR {
		t.Errorf("unlink a folder: %v, want EISDIR", err)
	}
	if err := Unlinkat(dir, "a", AT_REMOVEDIR); err != ENOTDIR {
		t.Errorf("rmdir a file: %v, want ENOTDIR", err)
	}
	if err := Unlinkat(dir, "d", AT_REMOVEDIR); err != ENOTEMPTY {
		t.Errorf("rmdir a full folder: %v, want ENOTEMPTY", err)
	}
	if err := Unlinkat(dir, "d/inner", 0); err != EINVAL {
		t.Errorf("unlink by a path of two names: %v, want EINVAL", err)
	}
	if err := Unlinkat(dir, "a", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Openat(dir, "a", O_RDONLY, 0); err != ENOENT {
		t.Errorf("a after unlink: %v, want ENOENT", err)
	}
}

// posixRename reports whether the volume of dir takes
// FileRenameInformationEx.
func posixRename(t *testing.T, dir int) bool {
	create(t, dir, "probe", "")
	defer Unlinkat(dir, "probe", 0)
	h, _, err := openForChange(dir, "probe", windows.DELETE)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	err = ntSetInfo(h, fileRenameInformationEx, renameInfo(windows.FILE_RENAME_POSIX_SEMANTICS, handle(dir), "probe2"))
	if err == nil {
		Unlinkat(dir, "probe2", 0)
	}
	return !unsupported(err)
}

// TestLockIsAdvisory: the edit lock does not stop another handle's read
// (Windows' locks are mandatory on the bytes they cover).
func TestLockIsAdvisory(t *testing.T) {
	_, _, dir := tempFolder(t)
	create(t, dir, "f", "data")
	fd, err := Openat(dir, "f", O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fd)
	if err := Flock(fd, LOCK_EX); err != nil {
		t.Fatalf("lock: %v", err)
	}
	other, err := Openat(dir, "f", O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(other)
	buf := make([]byte, 8)
	if n, err := Read(other, buf); err != nil || string(buf[:n]) != "data" {
		t.Errorf("read beside the lock: %q, %v", buf[:n], err)
	}
	err = windows.LockFileEx(windows.Handle(other), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockByte())
	if err == nil {
		t.Errorf("a second lock was given while the first is held")
	}
}

// TestReparsePointsNotFollowed: a symlink and a junction to a folder
// outside are opened themselves, reported as symlinks with their target
// as the fence's path, and never followed: not as the last name where a
// folder or the data is asked for, not on the way.
func TestReparsePointsNotFollowed(t *testing.T) {
	osPath, fencePath, dir := tempFolder(t)
	outside := filepath.Join(osPath, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	made := 0
	link := func(name string, mk func(string) error) {
		p := filepath.Join(osPath, name)
		err := mk(p)
		if err == nil {
			if fi, lerr := os.Lstat(p); lerr != nil || fi.Mode()&os.ModeSymlink == 0 && fi.Mode()&os.ModeIrregular == 0 {
				err = fmt.Errorf("made, but not there as a link (%v, %v)", fi, lerr)
			}
		}
		if err != nil {
			t.Logf("cannot make a %s here: %v (its rows are not run)", name, err)
			return
		}
		made++
		for _, flags := range []int{O_RDONLY | O_NOFOLLOW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, O_PATH | O_DIRECTORY | O_NOFOLLOW} {
			if fd, err := Openat(dir, name, flags, 0); err != ELOOP {
				t.Errorf("open the %s (flags %#x): %v, want ELOOP", name, flags, err)
				if err == nil {
					Close(fd)
				}
			}
		}
		if fd, err := Openat(dir, name+"/secret", O_RDONLY, 0); err != ELOOP {
			t.Errorf("open through the %s: %v, want ELOOP", name, err)
			if err == nil {
				Close(fd)
			}
		}
		st := identity(t, dir, name)
		if st.Mode&S_IFMT != S_IFLNK {
			t.Errorf("the %s is reported as %#o, want a symlink", name, st.Mode)
		}
		buf := make([]byte, 1024)
		n, err := Readlinkat(dir, name, buf)
		if want := fencePath + "/outside"; err != nil || !strings.EqualFold(string(buf[:n]), want) {
			t.Errorf("the %s's text: %q, %v; want %q", name, buf[:n], err, want)
		}
		if err := Unlinkat(dir, name, AT_REMOVEDIR); err != ENOTDIR {
			t.Errorf("rmdir the %s: %v, want ENOTDIR", name, err)
		}
		if err := Unlinkat(dir, name, 0); err != nil {
			t.Errorf("unlink the %s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
			t.Errorf("the %s's removal reached its target: %v", name, err)
		}
	}
	link("junction", func(p string) error { return fsystest.MakeJunction(p, outside) })
	link("symlink", func(p string) error {
		from, _ := windows.UTF16PtrFromString(p)
		to, _ := windows.UTF16PtrFromString(outside)
		return windows.CreateSymbolicLink(from, to, windows.SYMBOLIC_LINK_FLAG_DIRECTORY|0x2 /* ALLOW_UNPRIVILEGED_CREATE */)
	})
	if made == 0 {
		t.Skip("neither a junction nor a symlink can be made here")
	}
}

// TestNotDirIsNotMissing: a file opened as a folder, by a walk or an
// absolute path, is ENOTDIR as on Linux, and nothing reads it as a missing
// file. Go's syscall.ENOTDIR on Windows is ERROR_PATH_NOT_FOUND, which
// errors.Is takes for fs.ErrNotExist: grep and find of one file failed
// FS_NOT_FOUND under Wine, where Linux says FS_NOT_DIR.
func TestNotDirIsNotMissing(t *testing.T) {
	_, fencePath, dir := tempFolder(t)
	create(t, dir, "a", "x")
	for _, c := range []struct {
		what string
		open func() error
	}{
		{"a as a folder", func() error { _, err := Openat(dir, "a", O_RDONLY|O_DIRECTORY, 0); return err }},
		{"a handle on a as a folder", func() error { _, err := Openat(dir, "a", O_PATH|O_DIRECTORY|O_NOFOLLOW, 0); return err }},
		{"a name beneath a", func() error { _, err := Openat(dir, "a/b", O_RDONLY, 0); return err }},
		{"an absolute path beneath a", func() error { _, err := Open(fencePath+"/a/b/c", O_RDONLY, 0); return err }},
	} {
		err := c.open()
		var errno syscall.Errno
		if !errors.Is(err, ENOTDIR) || !errors.Is(err, syscall.ENOTDIR) || !errors.As(err, &errno) || errno != syscall.ENOTDIR {
			t.Errorf("open %s: %v, want ENOTDIR", c.what, err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			t.Errorf("open %s: %v is fs.ErrNotExist", c.what, err)
		}
	}
	if _, err := Open(fencePath+"/missing/b", O_RDONLY, 0); err != ENOENT {
		t.Errorf("open beneath a missing folder: %v, want ENOENT", err)
	}
}

// TestFlockFolder: a folder's handle takes no lock on Windows (LockFileEx
// fails on it, EBADF under Wine), and says so as EISDIR, which the fence
// reports as FS_IS_DIR as it does a folder on Linux; write and edit of a
// folder failed FS_IO ("flock: bad file descriptor") under Wine.
func TestFlockFolder(t *testing.T) {
	_, _, dir := tempFolder(t)
	if err := Mkdirat(dir, "d", 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := Openat(dir, "d", O_RDONLY|O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fd)
	if err := Flock(fd, LOCK_EX); err != EISDIR {
		t.Errorf("flock a folder: %v, want EISDIR", err)
	}
}

// TestFolderLockExcludes: a folder's lock (the root's, while a write may
// complete a git folder there) is held by any handle of that folder,
// however it was opened, until the handle that took it closes.
func TestFolderLockExcludes(t *testing.T) {
	osPath, fencePath, fd := tempFolder(t)
	if err := LockFolder(fd, LOCK_EX); err != nil {
		t.Fatalf("lock the folder: %v", err)
	}
	other, err := Open(fencePath, O_RDONLY|O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(other)
	var st Stat_t
	if err := Fstat(other, &st); err != nil {
		t.Fatal(err)
	}
	dir, err := folderLockDir()
	if err != nil {
		t.Fatal(err)
	}
	try := func() error {
		u, _ := windows.UTF16PtrFromString(folderLockFile(dir, &st))
		h, err := windows.CreateFile(u, windows.GENERIC_READ|windows.GENERIC_WRITE,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
		if err != nil {
			return err
		}
		defer windows.CloseHandle(h)
		return windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockByte())
	}
	if err := try(); err == nil {
		t.Fatalf("the lock of %s was given to a second handle while the first holds it", osPath)
	}
	Close(fd)
	if err := try(); err != nil {
		t.Fatalf("the lock of %s is still held after its handle closed: %v", osPath, err)
	}
}

// TestRenameOverHeldFile: a rename replaces a file the fence holds open
// and locked, as an edit's does, on every volume: with POSIX semantics
// where it has them, and otherwise (Wine 8, FAT) by moving the held file
// aside, which goes once its last handle closes. The held handle still
// reads what it opened; nothing is left beside the new file.
func TestRenameOverHeldFile(t *testing.T) {
	osPath, _, dir := tempFolder(t)
	create(t, dir, "a.txt", "old")
	create(t, dir, "new.tmp", "new")
	held, err := Openat(dir, "a.txt", O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Flock(held, LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := Renameat(dir, "new.tmp", dir, "a.txt"); err != nil {
		Close(held)
		t.Fatalf("rename over the held a.txt: %v", err)
	}
	buf := make([]byte, 8)
	if n, err := Read(held, buf); err != nil || string(buf[:n]) != "old" {
		t.Errorf("the held handle reads %q, %v; want what it opened, old", buf[:n], err)
	}
	Close(held)
	if got, err := os.ReadFile(filepath.Join(osPath, "a.txt")); err != nil || string(got) != "new" {
		t.Errorf("a.txt after the rename: %q, %v; want new", got, err)
	}
	names, err := os.ReadDir(osPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		var got []string
		for _, e := range names {
			got = append(got, e.Name())
		}
		t.Errorf("the folder holds %q once the held handle closed; want a.txt alone", got)
	}
}
