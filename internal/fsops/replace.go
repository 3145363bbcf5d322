package fsops

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// locked is a mutation's target, held for the critical section: its folder
// opened through the fence, and the file itself, if it exists, opened and
// locked with an exclusive flock. write and edit both take this lock, so
// writes and edits from many processes serialize and none loses an update.
type locked struct {
	op    string
	given string // the target as the caller wrote it, for messages
	dir   *sandbox.Dir
	name  string
	// file is the locked current file; nil when the target does not
	// exist.
	file *os.File
	st   unix.Stat_t
}

// maxLockRetries bounds how often the lock is taken again because another
// process replaced the file while this one waited. Each retry means
// somebody else made progress, so it is never reached in practice.
const maxLockRetries = 1000

// lockTarget opens the folder of t through the fence (OpenForWrite, which
// decides on t as in says) and locks the file at t, verifying after the lock that the name still
// names the locked file: a writer that replaced it in the meantime leaves
// the lock on an unlinked file, and this process starts over.
func lockTarget(f *sandbox.Fence, op string, t *sandbox.Target, in sandbox.Intent) (*locked, error) {
	dir, name, err := f.OpenForWrite(op, t, in)
	if err != nil {
		return nil, err
	}
	l := &locked{op: op, given: t.Given, dir: dir, name: name}
	for range maxLockRetries {
		// O_NONBLOCK: opening a FIFO must not hang; it is refused below.
		file, err := dir.Open(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
		if errors.Is(err, os.ErrNotExist) {
			return l, nil
		}
		if err != nil {
			dir.Close()
			return nil, fserr.FromOS(op, t.Given, err)
		}
		if err := unix.Flock(int(file.Fd()), unix.LOCK_EX); err != nil {
			file.Close()
			dir.Close()
			return nil, fserr.FromOS(op, t.Given, os.NewSyscallError("flock", err))
		}
		var held unix.Stat_t
		if err := unix.Fstat(int(file.Fd()), &held); err != nil {
			file.Close()
			dir.Close()
			return nil, fserr.FromOS(op, t.Given, os.NewSyscallError("fstat", err))
		}
		now, err := dir.Lstat(name)
		if err == nil && now.Dev == held.Dev && now.Ino == held.Ino {
			switch held.Mode & unix.S_IFMT {
			case unix.S_IFREG:
				if err := checkWritable(op, t.Given, file, func() error { return dir.Access(name, unix.W_OK) }); err != nil {
					file.Close()
					dir.Close()
					return nil, err
				}
				l.file, l.st = file, held
				return l, nil
			case unix.S_IFDIR:
				file.Close()
				dir.Close()
				return nil, fserr.New(fserr.IsDir, op+": "+t.Given+": is a folder")
			}
			file.Close()
			dir.Close()
			return nil, fserr.New(fserr.InvalidArgument, op+": "+t.Given+": not a regular file")
		}
		file.Close() // replaced while we waited: take the new one
	}
	dir.Close()
	return nil, fserr.New(fserr.IO, op+": "+t.Given+": the file kept changing while waiting for its lock")
}

// Close releases the lock and the folder.
func (l *locked) Close() {
	if l.file != nil {
		l.file.Close()
	}
	l.dir.Close()
}

// exists reports whether the target existed when it was locked.
func (l *locked) exists() bool { return l.file != nil }

// replace writes a new file with fill and renames it over the target: a
// temp file in the same folder, written, given the old file's permission
// bits and owner, synced, renamed into place. On any failure the old file
// is untouched and no temp file remains.
//
// Durability, one rule for write, edit and patch: the temp file is synced
// before the rename, so a power loss leaves the old content or the new,
// never a torn file; the folder is not synced after it, so the rename is
// durable at the file system's next journal commit, and a power loss
// right after a call may bring back the previous version (issue 26).
//
// fill writes the content into the temp file. The settle function it may
// return finishes work that trails the writing (the hash read back behind
// it): replace calls it once, after the sync, so the two overlap, and
// before the rename, so its failure still leaves the old file; on an
// earlier failure replace calls it too, and ignores what it returns.
func (l *locked) replace(fill func(tmp *os.File) (settle func() error, err error)) error {
	var like *unix.Stat_t
	if l.exists() {
		like = &l.st
	}
	s, err := l.stage(like, 0, fill)
	if err != nil {
		return err
	}
	defer s.discard()
	return s.commit()
}

// staged is a new content for a locked target, written and synced beside
// it through the folder's handle, still unnamed: commit gives it the
// target's name, discard drops it and leaves nothing behind.
type staged struct {
	l   *locked
	tmp *sandbox.Temp
}

// stage is replace up to the rename: the temp file filled, given the
// permission bits and owner of like (the file it replaces, or the file a
// patch moves; nil for a new file, which gets the usual bits less the
// umask), then, if chmod is not 0, the bits chmod says, and synced.
func (l *locked) stage(like *unix.Stat_t, chmod uint32, fill func(tmp *os.File) (settle func() error, err error)) (*staged, error) {
	perm := uint32(0o666) // less the umask, as for any new file
	if like != nil {
		perm = like.Mode & 0o7777
	}
	tmp, err := l.dir.TempFile(perm)
	if err != nil {
		return nil, fserr.FromOS(l.op, l.dir.Path, err)
	}
	s := &staged{l: l, tmp: tmp}
	ok := false
	defer func() {
		if !ok {
			tmp.Discard()
		}
	}()
	settle, err := fill(tmp.File)
	if err != nil {
		return nil, err
	}
	if settle == nil {
		settle = func() error { return nil }
	}
	settled := false
	defer func() {
		if !settled {
			settle()
		}
	}()
	fd := int(tmp.Fd())
	if like != nil {
		// chown clears set-id bits, so the mode comes after.
		if err := l.keepOwner(fd, like); err != nil {
			return nil, err
		}
		if err := unix.Fchmod(fd, perm); err != nil {
			return nil, fserr.FromOS(l.op, l.dir.Path, os.NewSyscallError("fchmod", err))
		}
	}
	if chmod != 0 {
		if err := unix.Fchmod(fd, chmod); err != nil {
			return nil, fserr.FromOS(l.op, l.dir.Path, os.NewSyscallError("fchmod", err))
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, fserr.FromOS(l.op, l.dir.Path, err)
	}
	settled = true
	if err := settle(); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// commit gives the staged content the target's name (sandbox.Temp.Commit):
// it replaces the file that was locked, or creates the name, which must
// still be free.
func (s *staged) commit() error {
	if err := s.tmp.Commit(s.l.name, s.l.exists()); err != nil {
		return fserr.FromOS(s.l.op, s.l.dir.Path, err)
	}
	return nil
}

// discard drops the staged content; safe after commit.
func (s *staged) discard() { s.tmp.Discard() }

// checkWritable decides, on the opened file, whether this process may
// write it, as the OS decides for `sh -c '> f'`: the permission bits and
// ACLs against the effective user and groups (root may write any file), a
// read-only mount, an immutable flag. A replacement never writes through
// the file, but a file its user could not overwrite is not replaced
// either: FS_PERMISSION, before anything changes. A running program
// (ETXTBSY) may be replaced. The check goes through /proc/self/fd, so it
// is about the file opened, not whatever the name holds by then; without
// /proc, byName checks the name, which the caller has verified to be the
// opened file.
func checkWritable(op, given string, file *os.File, byName func() error) error {
	err := unix.Faccessat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", file.Fd()), unix.W_OK, unix.AT_EACCESS)
	if errors.Is(err, unix.ENOENT) && byName != nil {
		err = byName()
	}
	switch {
	case err == nil, errors.Is(err, unix.ETXTBSY):
		return nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EROFS):
		e := fserr.Wrap(fserr.Permission, op+": "+given+": permission denied: the file is not writable by this user", err)
		e.Hint = "its permissions forbid writing it, as they would forbid `> file`; nothing was changed"
		return e
	}
	return fserr.FromOS(op, given, os.NewSyscallError("faccessat", err))
}

// keepOwner gives the temp file fd the owner and group of like, the file
// it replaces, or refuses with FS_PERMISSION where the process may not set
// them (another user's file, a group it is not in): a replacement never
// hands a file over to another owner silently.
func (l *locked) keepOwner(fd int, like *unix.Stat_t) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fserr.FromOS(l.op, l.given, os.NewSyscallError("fstat", err))
	}
	if st.Uid == like.Uid && st.Gid == like.Gid {
		return nil
	}
	if err := unix.Fchown(fd, int(like.Uid), int(like.Gid)); err != nil {
		e := fserr.Wrap(fserr.Permission, fmt.Sprintf("%s: %s: cannot keep the file's owner and group %d:%d (a replacement would belong to %d:%d): %v",
			l.op, l.given, like.Uid, like.Gid, st.Uid, st.Gid, err), err)
		e.Hint = "the file belongs to another user or group; nothing was changed"
		return e
	}
	return nil
}
