package sandbox

import (
	"encoding/binary"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/dirent"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
)

// ListDir is a folder opened for a listing and checked against deny_read.
// Its entries are looked at, and its subfolders opened, by handle, one
// name at a time and never through a symlink, so a listing goes as deep
// as the tree does, whatever PATH_MAX says, and lists what it checked.
type ListDir struct {
	f  *Fence
	op string
	// dirfd is the folder's descriptor, held raw rather than in an
	// *os.File: a walk opens one a folder, and os.NewFile's fcntl and
	// finalizer cost more than the open. -1 once closed.
	dirfd int
	// Path is the folder's path: the path walked to reach it, one handle
	// at a time. Entries are judged by Path joined with their name.
	Path string
}

// OpenList opens the folder t for a listing, following symlinks, and
// decides on what it opened as OpenRead does. A file that is not a folder
// is FS_NOT_DIR.
func (f *Fence) OpenList(op string, t Target) (*ListDir, error) {
	if err := f.checkReadTarget(op, t); err != nil {
		return nil, err
	}
	w, err := walkPath(f.givenAbs(t), walkSpec{flags: fsys.O_RDONLY | fsys.O_DIRECTORY, followLast: true})
	if err != nil {
		return nil, t.osError(op, err)
	}
	if err := f.checkReadWalked(op, t, w); err != nil {
		fsys.Close(w.fd)
		return nil, err
	}
	return &ListDir{f: f, op: op, dirfd: w.fd, Path: w.path}, nil
}

// Close releases the folder; a second Close does nothing.
func (d *ListDir) Close() error {
	if d.dirfd < 0 {
		return nil
	}
	fd := d.dirfd
	d.dirfd = -1
	return fsys.Close(fd)
}

// Names returns the names of the folder's entries, unsorted, without
// looking at any of them.
func (d *ListDir) Names() ([]string, error) {
	var names []string
	err := d.readDir(func(batch int) { names = slices.Grow(names, batch) }, func(name string, _ uint8) error {
		names = append(names, name)
		return nil
	})
	return names, err
}

// Hidden reports whether the entry name is under deny_read by its path
// alone, without looking at it: for counting entries a listing does not
// show.
func (d *ListDir) Hidden(name string) bool {
	_, ok := d.deniedEntry(name)
	return ok
}

// deniedEntry returns the deny_read glob that covers the entry name by
// its path. The folder's own path passed deny_read when it was opened, so
// only a glob whose last component matches name can cover the entry.
func (d *ListDir) deniedEntry(name string) (string, bool) {
	if len(d.f.denyRead) == 0 {
		return "", false
	}
	if i := d.f.DenyMatcher().Child(d.Path, name); i >= 0 {
		return d.f.denyRead[i].shown, true
	}
	return "", false
}

// Lstat looks at the entry name without following it. An entry under
// deny_read, by its path or, for a file with several links, by its
// identity, is a *DeniedError: a listing leaves it out.
func (d *ListDir) Lstat(name string) (Stat, error) {
	if err := oneEntry(d.Path, name); err != nil {
		return Stat{}, err
	}
	if g, ok := d.deniedEntry(name); ok {
		p := d.join(name)
		return Stat{}, d.f.readDenied(d.op, Target{Given: p, Path: p}, g)
	}
	var st Stat
	if err := fsys.Fstatat(d.fd(), name, &st.Stat_t, fsys.AT_SYMLINK_NOFOLLOW); err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: d.join(name), Err: err}
	}
	if g, ok := d.f.deniedIdentity(&st.Stat_t); ok {
		p := d.join(name)
		return Stat{}, d.f.readDenied(d.op, Target{Given: p, Path: p}, g)
	}
	if st.Mode&fsys.S_IFMT == fsys.S_IFLNK {
		// Replaced by something else since the look: no target then.
		st.Target, _ = readlinkat(d.fd(), name)
	}
	return st, nil
}

// Open opens the subfolder name for listing, never through a symlink: a
// folder replaced by a symlink since Lstat is FS_IO, not followed. What it
// opened is checked as OpenList's folder is.
func (d *ListDir) Open(name string) (*ListDir, error) {
	if err := oneEntry(d.Path, name); err != nil {
		return nil, err
	}
	p := d.join(name)
	fd, _, err := d.openEntry(name, p, fsys.O_RDONLY|fsys.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &ListDir{f: d.f, op: d.op, dirfd: fd, Path: p}, nil
}

// openEntry opens the entry name, whose path is p, with flags, never
// through a symlink, and decides on what it opened (checkReadOpened)
// before anything is read. With wantType (fsys.S_IFREG) anything of
// another type is closed unread: FS_INVALID_ARGUMENT. It returns the
// descriptor and the size the open found (a folder's is not looked at).
func (d *ListDir) openEntry(name, p string, flags int, wantType uint32) (int, int64, error) {
	fd, err := openRead(d.fd(), name, flags)
	switch {
	case err == fsys.ELOOP:
		return -1, 0, fserr.Wrap(fserr.IO, "became a symlink while listed: not followed", err)
	case err == fsys.ENOTDIR:
		return -1, 0, fserr.Wrap(fserr.IO, "no longer a folder: not listed", err)
	case err != nil:
		return -1, 0, &os.PathError{Op: "open", Path: p, Err: err}
	}
	// st stays on the stack (it is not returned): a walk opens one
	// folder after another, and a heap Stat_t each was a tenth of its
	// garbage.
	var st fsys.Stat_t
	if flags&fsys.O_DIRECTORY != 0 {
		// The kernel opened a folder (ENOTDIR otherwise) and no symlink
		// (O_NOFOLLOW): its type is all the checks below use of a
		// folder's stat (deniedIdentity judges regular files only), so a
		// walk spares an fstat a folder.
		st.Mode = fsys.S_IFDIR
	} else if err := fsys.Fstat(fd, &st); err != nil {
		fsys.Close(fd)
		return -1, 0, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	if wantType != 0 && uint32(st.Mode&fsys.S_IFMT) != wantType {
		fsys.Close(fd)
		return -1, 0, fserr.New(fserr.InvalidArgument, p+": not a regular file")
	}
	err = d.checkEntryOpened(d.op, Target{Given: p, Path: p}, fd, p, &st)
	if err != nil {
		fsys.Close(fd)
		return -1, 0, err
	}
	return fd, st.Size, nil
}

// checkEntryOpened is checkReadOpened for an entry opened by name in this
// folder, its path passed by deny_read before the open, with the
// /proc/self/fd read-back only where a rule could apply: a file with
// several links, a name a glob's last component matches, or a place in or
// above an anchored glob's tree. Elsewhere what was opened is the folder's
// path joined with its name, unless the folder was moved meanwhile, and
// no move through dsh-fs carries a folder across a glob's cover
// (docs/design.md §4, "A folder carries what lies beneath it").
func (d *ListDir) checkEntryOpened(op string, t Target, fd int, walked string, st *fsys.Stat_t) error {
	if len(d.f.denyRead) == 0 {
		return nil
	}
	m := d.f.DenyMatcher()
	if (st.Nlink > 1 && st.Mode&fsys.S_IFMT != fsys.S_IFDIR) || m.NameCandidate(path.Base(walked)) || m.MayApplyBeneath(walked) {
		return d.f.checkReadOpened(op, t, fd, walked, st)
	}
	if g, ok := d.f.deniedIdentity(st); ok {
		return d.f.readDenied(op, t, g)
	}
	return nil
}

func (d *ListDir) fd() int { return d.dirfd }

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

// EntryType is what a folder entry is, as the folder says without a look
// at the entry (d_type), or as a look says where the file system does not.
type EntryType uint8

// The types of folder entries.
const (
	EntryFile EntryType = iota
	EntryDir
	EntrySymlink
	EntryOther
)

// DirEntry is one entry of a folder: its name and its type.
type DirEntry struct {
	Name string
	Type EntryType
}

// Entries returns the folder's entries with their types, unsorted.
// Nothing is opened; where the file system does not give the type, the
// entry is looked at without following it (one that vanished meanwhile
// is left out, as os.ReadDir leaves it).
func (d *ListDir) Entries() ([]DirEntry, error) {
	var out []DirEntry
	err := d.readDir(func(batch int) { out = slices.Grow(out, batch) }, func(name string, dt uint8) error {
		t := EntryOther
		switch dt {
		case fsys.DT_REG:
			t = EntryFile
		case fsys.DT_DIR:
			t = EntryDir
		case fsys.DT_LNK:
			t = EntrySymlink
		case fsys.DT_UNKNOWN:
			var st fsys.Stat_t
			err := fsys.Fstatat(d.fd(), name, &st, fsys.AT_SYMLINK_NOFOLLOW)
			if err == fsys.ENOENT {
				return nil
			}
			if err != nil {
				return &os.PathError{Op: "lstat", Path: d.join(name), Err: err}
			}
			switch st.Mode & fsys.S_IFMT {
			case fsys.S_IFREG:
				t = EntryFile
			case fsys.S_IFDIR:
				t = EntryDir
			case fsys.S_IFLNK:
				t = EntrySymlink
			}
		}
		out = append(out, DirEntry{Name: name, Type: t})
		return nil
	})
	return out, err
}

// direntBufSize is the getdents buffer: 32 KiB, four times os.ReadDir's,
// so that most folders are read in one call and the empty call that ends
// them.
const direntBufSize = 32 << 10

var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufSize); return &b }}

// readDir calls each with the name and d_type of every entry of the
// folder but "." and "..", reading from where the descriptor stands,
// after grow with the number of records of each getdents call (so the
// caller's slice grows once a batch, not by doubling). The names of one
// call share one string (one allocation a batch, not one a name); they
// are as long-lived as any string.
func (d *ListDir) readDir(grow func(records int), each func(name string, dt uint8) error) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := dirent.Read(d.fd(), buf)
		if err == fsys.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "read folder", Path: d.Path, Err: err}
		}
		if n <= 0 {
			return nil
		}
		records := 0
		for off := 0; off+dirent.TypeOff <= n; records++ {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 {
				break // malformed: the loop below says so
			}
			off += reclen
		}
		grow(records)
		batch := string(buf[:n])
		for off := 0; off < n; {
			// A record (getdents): d_ino (8) first, d_reclen (2) at 16,
			// d_type (1) and d_name (NUL-terminated, padded to reclen)
			// where the OS puts them.
			if off+dirent.NameOff > n {
				return &os.PathError{Op: "read folder", Path: d.Path, Err: fsys.EIO}
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < dirent.NameOff || off+reclen > n {
				return &os.PathError{Op: "read folder", Path: d.Path, Err: fsys.EIO}
			}
			dt := buf[off+dirent.TypeOff]
			name := batch[off+dirent.NameOff : off+reclen]
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if ino == 0 || name == "." || name == ".." || name == "" {
				continue // a deleted entry some file systems still list
			}
			if err := each(name, dt); err != nil {
				return err
			}
		}
	}
}

// FileHandle is a regular file opened for reading in a listed folder and
// checked against deny_read on what was opened. It reads with read(2)
// directly: a search opens thousands of them.
type FileHandle struct {
	fd int
	// Path is the file's path: its folder's Path joined with its name.
	Path string
	// Size is the file's size when it was opened.
	Size int64
}

// OpenFile opens the entry name for reading, never through a symlink,
// and decides on what it opened as OpenRead does: a name under deny_read
// is denied before anything is opened, and the opened file's path (and
// what /proc/self/fd says of it) and identity are checked before a byte
// is read. Anything but a regular file is FS_INVALID_ARGUMENT, closed
// unread; a file replaced by a symlink since the folder was read is
// FS_IO, not followed. A FIFO swapped in is opened without blocking.
func (d *ListDir) OpenFile(name string) (*FileHandle, error) {
	if err := oneEntry(d.Path, name); err != nil {
		return nil, err
	}
	p := d.join(name)
	if g, ok := d.deniedEntry(name); ok {
		return nil, d.f.readDenied(d.op, Target{Given: p, Path: p}, g)
	}
	fd, size, err := d.openEntry(name, p, fsys.O_RDONLY|fsys.O_NONBLOCK|fsys.O_NOCTTY, fsys.S_IFREG)
	if err != nil {
		return nil, err
	}
	return &FileHandle{fd: fd, Path: p, Size: size}, nil
}

// Read reads from the file, retrying a read a signal interrupted.
func (h *FileHandle) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for range maxRaceRetries {
		n, err := fsys.Read(h.fd, b)
		switch {
		case err == fsys.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: h.Path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
	return 0, &os.PathError{Op: "read", Path: h.Path, Err: fsys.EINTR}
}

// Seek sets the offset of the next Read, as lseek(2) does: a search that
// found the file is not UTF-8 reads it again from its start, decoded.
func (h *FileHandle) Seek(offset int64, whence int) (int64, error) {
	off, err := fsys.Seek(h.fd, offset, whence)
	if err != nil {
		return 0, &os.PathError{Op: "seek", Path: h.Path, Err: err}
	}
	return off, nil
}

// Close releases the file.
func (h *FileHandle) Close() error { return fsys.Close(h.fd) }
