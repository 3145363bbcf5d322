package sandbox

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/fserr"
)

// ListDir is a folder opened for a listing and checked against deny_read.
// Its entries are looked at, and its subfolders opened, by handle, one
// name at a time and never through a symlink, so a listing goes as deep
// as the tree does, whatever PATH_MAX says, and lists what it checked.
type ListDir struct {
	f    *Fence
	op   string
	file *os.File
	// Path is the folder's path: the path walked to reach it, one handle
	// at a time. Entries are judged by Path joined with their name.
	Path string
}

// OpenList opens the folder t for a listing, following symlinks, and
// decides on what it opened as OpenRead does. A file that is not a folder
// is FS_NOT_DIR.
func (f *Fence) OpenList(op string, t Target) (*ListDir, error) {
	if err := f.CheckRead(op, t); err != nil {
		return nil, err
	}
	w, err := openWalk(f.givenAbs(t), unix.O_RDONLY|unix.O_DIRECTORY, true)
	if err != nil {
		return nil, fserr.FromOS(op, t.Given, err)
	}
	if err := f.checkReadOpened(op, t, w.fd, w.path, &w.st); err != nil {
		unix.Close(w.fd)
		return nil, err
	}
	return &ListDir{f: f, op: op, file: os.NewFile(uintptr(w.fd), w.path), Path: w.path}, nil
}

// Close releases the folder.
func (d *ListDir) Close() error { return d.file.Close() }

// Names returns the names of the folder's entries, unsorted, without
// looking at any of them.
func (d *ListDir) Names() ([]string, error) {
	names, err := d.file.Readdirnames(-1)
	if err != nil {
		return nil, &os.PathError{Op: "read folder", Path: d.Path, Err: underlying(err)}
	}
	return names, nil
}

// Hidden reports whether the entry name is under deny_read by its path
// alone, without looking at it: for counting entries a listing does not
// show.
func (d *ListDir) Hidden(name string) bool {
	return d.f.ReadDenied(d.join(name))
}

// Lstat looks at the entry name without following it. An entry under
// deny_read, by its path or, for a file with several links, by its
// identity, is a *DeniedError: a listing leaves it out.
func (d *ListDir) Lstat(name string) (Stat, error) {
	p := d.join(name)
	if g, ok := d.f.deniedRead(Target{Given: p, Path: p}); ok {
		return Stat{}, d.f.readDenied(d.op, Target{Given: p, Path: p}, g)
	}
	var st Stat
	if err := unix.Fstatat(d.fd(), name, &st.Stat_t, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	if g, ok := d.f.deniedIdentity(&st.Stat_t); ok {
		return Stat{}, d.f.readDenied(d.op, Target{Given: p, Path: p}, g)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		// Replaced by something else since the look: no target then.
		st.Target, _ = readlinkat(d.fd(), name)
	}
	return st, nil
}

// Open opens the subfolder name for listing, never through a symlink: a
// folder replaced by a symlink since Lstat is FS_IO, not followed. What it
// opened is checked as OpenList's folder is.
func (d *ListDir) Open(name string) (*ListDir, error) {
	p := d.join(name)
	fd, err := openRead(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY)
	switch {
	case err == unix.ELOOP:
		return nil, fserr.Wrap(fserr.IO, "became a symlink while listed: not followed", err)
	case err == unix.ENOTDIR:
		return nil, fserr.Wrap(fserr.IO, "no longer a folder: not listed", err)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	if err := d.f.checkReadOpened(d.op, Target{Given: p, Path: p}, fd, p, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &ListDir{f: d.f, op: d.op, file: os.NewFile(uintptr(fd), p), Path: p}, nil
}

func (d *ListDir) fd() int { return int(d.file.Fd()) }

func (d *ListDir) join(name string) string {
	if d.Path == "/" {
		return "/" + name
	}
	return d.Path + "/" + name
}

// underlying is the errno inside an *os.PathError or *os.SyscallError.
func underlying(err error) error {
	switch e := err.(type) {
	case *os.PathError:
		return e.Err
	case *os.SyscallError:
		return e.Err
	}
	return err
}
