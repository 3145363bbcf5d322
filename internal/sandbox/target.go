package sandbox

import (
	"errors"
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Target is a path the fence has resolved.
type Target struct {
	// Given is the path as the caller wrote it.
	Given string
	// Path is the canonical absolute path (see Canonical).
	Path string
	// root is the canonical writable root that contains Path, once
	// CheckWrite has passed in workspace-write mode; "" otherwise. It is
	// the fence's to fill in: openDir decides again and never trusts it
	// from a caller (IsRoot and SameRoot tell what callers need of it).
	root string
	// rel is Path relative to root ("." for the root itself).
	rel string
	// name says Path names the last name as written, a final symlink
	// not followed (ResolveName): the open resolves it again the same
	// way.
	name bool
}

// IsRoot reports whether t, passed by CheckWrite, is a writable root
// itself.
func (t Target) IsRoot() bool { return t.root != "" && t.rel == "." }

// SameRoot reports whether t and u, each passed by CheckWrite, lie in the
// same writable root.
func (t Target) SameRoot(u Target) bool { return t.root != "" && t.root == u.root }

// osError is op's failure on t that the system reported as err: its code
// from fserr's one table (fserr.FromOS), its message naming t as the
// caller wrote it. Every system error about a target is made here.
func (t Target) osError(op string, err error) error {
	return fserr.FromOS(op, t.Given, err)
}

// CheckWritable decides, on the opened file, whether this process may
// write it, as the OS decides for `sh -c '> f'`: the permission bits and
// ACLs against the effective user and groups (root may write any file), a
// read-only mount, an immutable flag. A replacement never writes through
// the file, but a file its user could not overwrite is not replaced
// either: FS_PERMISSION, before anything changes. A running program
// (ETXTBSY) may be replaced. The check goes through /proc/self/fd, so it
// is about the file opened, not whatever the name holds by then; without
// /proc, byName checks the name, which the caller has verified to be the
// opened file.
func (t Target) CheckWritable(op string, file *os.File, byName func() error) error {
	err := accessOpened(file.Fd(), fsys.W_OK)
	if errors.Is(err, fsys.ENOENT) && byName != nil {
		err = byName()
	}
	switch {
	case err == nil, errors.Is(err, fsys.ETXTBSY):
		return nil
	case errors.Is(err, fsys.EACCES), errors.Is(err, fsys.EPERM), errors.Is(err, fsys.EROFS):
		e := fserr.Wrap(fserr.Permission, op+": "+t.Given+": permission denied: the file is not writable by this user", err)
		e.Hint = "its permissions forbid writing it, as they would forbid `> file`; nothing was changed"
		return e
	}
	return t.osError(op, os.NewSyscallError("faccessat", err))
}
