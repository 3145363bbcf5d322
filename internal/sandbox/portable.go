//go:build darwin || windows || (linux && dshportable)

package sandbox

import (
	"errors"
	"sync/atomic"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// The portable build (see doc.go): macOS, and Linux under -tags
// dshportable, with every Linux accelerator off. Paths are opened by the
// component walk alone and temp files are named.

// Accelerated reports whether this build uses Linux's accelerators
// (openat2, O_TMPFILE): false here, where the portable walk and a named
// temp file serve.
func Accelerated() bool { return false }

// openat2Func has nothing to call in the portable build.
type openat2Func = func()

// noOpenat2 is always true in effect here; tests that set it change
// nothing.
var noOpenat2 atomic.Bool

// walkAtOnce is openat2's one-call walk, which the portable build does
// not have: false, so the component walk gives every answer.
func walkAtOnce(string, walkSpec) (walked, bool) { return walked{}, false }

// openUnnamed has no O_TMPFILE to use: the caller makes a named temp
// file with O_EXCL, which Discard removes on every error path.
func openUnnamed(int, uint32) (int, error) { return -1, errors.ErrUnsupported }

// link is never reached: every temp file here has a name.
func (t *Temp) link(string) error { return errors.ErrUnsupported }

// openHandle opens name in the folder dirfd with flags, never following a
// final symlink. A handle (oPath) is made as macOS makes one, which has
// no O_PATH: a folder by searchFlags; anything else is looked at first
// and opened by what it is (openByType). A name that changed between the
// look and the open (a concurrent replacement renamed over it) is looked
// at again, at most maxRaceRetries times, then EAGAIN.
func openHandle(dirfd int, name string, flags int) (int, error) {
	if flags&oPath == 0 {
		return fsys.Openat(dirfd, name, flags&readFlags|fsys.O_NOFOLLOW|fsys.O_CLOEXEC, 0)
	}
	for range maxRaceRetries {
		fd, err := fsys.Openat(dirfd, name, searchFlags|fsys.O_CLOEXEC, 0)
		if flags&fsys.O_DIRECTORY != 0 || err != fsys.ENOTDIR && err != fsys.ELOOP {
			return fd, err
		}
		if fd, err = openByType(dirfd, name); err != errChanged {
			return fd, err
		}
	}
	return -1, fsys.EAGAIN
}

// errChanged is openByType's word for a name that changed under it.
var errChanged = errors.New("changed between the look and the open")

// openByType opens the object name of dirfd, which is no folder, by its
// type: a symlink by linkFlags, a regular file read-only, a device, fifo
// or socket by specialFlags; what was opened must be what was looked at
// (device and inode), errChanged otherwise.
func openByType(dirfd int, name string) (int, error) {
	var seen, opened fsys.Stat_t
	if err := fsys.Fstatat(dirfd, name, &seen, fsys.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, err
	}
	open := specialFlags
	switch seen.Mode & fsys.S_IFMT {
	case fsys.S_IFDIR:
		return -1, errChanged // a folder since the first open
	case fsys.S_IFLNK:
		open = linkFlags
	case fsys.S_IFREG:
		open = fsys.O_RDONLY | fsys.O_NONBLOCK | fsys.O_NOCTTY | fsys.O_NOFOLLOW
	}
	fd, err := fsys.Openat(dirfd, name, open|fsys.O_CLOEXEC, 0)
	switch {
	case err == fsys.ELOOP || err == fsys.ENOENT:
		return -1, errChanged // a symlink since the look, or gone
	case err != nil:
		return -1, err
	}
	if err := fsys.Fstat(fd, &opened); err != nil || opened.Dev != seen.Dev || opened.Ino != seen.Ino {
		fsys.Close(fd)
		return -1, errChanged
	}
	return fd, nil
}
