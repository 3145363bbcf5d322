package fsops

import (
	"fmt"
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// locked is a mutation's target as the fence holds it for the critical
// section (sandbox.Fence.Lock), with the call's name for messages.
type locked struct {
	op string
	*sandbox.Held
}

// lockTarget holds t for a mutation: the fence's one call (Lock) decides,
// opens, locks, re-checks and applies deny_read to what it locked.
func lockTarget(f *sandbox.Fence, op string, t *sandbox.Target, in sandbox.Intent) (*locked, error) {
	h, err := f.Lock(op, t, in)
	if err != nil {
		return nil, err
	}
	return &locked{op: op, Held: h}, nil
}

// replace writes a new file with fill and renames it over the target,
// as a temp file in the same folder given the old file's permission bits
// and owner, synced before the rename (the folder is not synced after:
// docs/design.md's durability rule). On any failure the old file is
// untouched and no temp file remains. The settle function fill may
// return finishes work trailing the writing (the hash read back): called
// once after the sync, so the two overlap, and before the rename, so its
// failure still leaves the old file; on an earlier failure it is called
// too and what it returns ignored.
func (l *locked) replace(fill func(tmp *os.File) (settle func() error, err error)) error {
	var like *fsys.Stat_t
	if l.Exists() {
		like = &l.Stat
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
func (l *locked) stage(like *fsys.Stat_t, chmod uint32, fill func(tmp *os.File) (settle func() error, err error)) (*staged, error) {
	perm := uint32(0o666) // less the umask, as for any new file
	if like != nil {
		perm = uint32(like.Mode & 0o7777)
	}
	tmp, err := l.Dir.TempFile(l.Name, l.Exists(), perm)
	if err != nil {
		return nil, fserr.FromOS(l.op, l.Dir.Path, err)
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
		if err := fsys.Fchmod(fd, perm); err != nil {
			return nil, fserr.FromOS(l.op, l.Dir.Path, os.NewSyscallError("fchmod", err))
		}
	}
	if chmod != 0 {
		if err := fsys.Fchmod(fd, chmod); err != nil {
			return nil, fserr.FromOS(l.op, l.Dir.Path, os.NewSyscallError("fchmod", err))
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, fserr.FromOS(l.op, l.Dir.Path, err)
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
	if err := s.tmp.Commit(s.l.Name, s.l.Exists()); err != nil {
		return fserr.FromOS(s.l.op, s.l.Dir.Path, err)
	}
	return nil
}

// discard drops the staged content; safe after commit.
func (s *staged) discard() { s.tmp.Discard() }

// keepOwner gives the temp file fd the owner and group of like, the file
// it replaces, or refuses with FS_PERMISSION where the process may not set
// them (another user's file, a group it is not in): a replacement never
// hands a file over to another owner silently.
func (l *locked) keepOwner(fd int, like *fsys.Stat_t) error {
	var st fsys.Stat_t
	if err := fsys.Fstat(fd, &st); err != nil {
		return fserr.FromOS(l.op, l.Given(), os.NewSyscallError("fstat", err))
	}
	if st.Uid == like.Uid && st.Gid == like.Gid {
		return nil
	}
	if err := fsys.Fchown(fd, int(like.Uid), int(like.Gid)); err != nil {
		e := fserr.Wrap(fserr.Permission, fmt.Sprintf("%s: %s: cannot keep the file's owner and group %d:%d (a replacement would belong to %d:%d): %v",
			l.op, l.Given(), like.Uid, like.Gid, st.Uid, st.Gid, err), err)
		e.Hint = "the file belongs to another user or group; nothing was changed"
		return e
	}
	return nil
}
