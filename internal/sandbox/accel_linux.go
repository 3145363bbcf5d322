//go:build linux && !dshportable

package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
)

// Linux's accelerators (see doc.go): openat2 for a path with no symlink
// in it, O_TMPFILE for an unnamed temp file. -tags dshportable leaves
// this file out, and portable.go stands in.

// Accelerated reports whether this build uses Linux's accelerators
// (openat2, O_TMPFILE): true here, false on macOS and under -tags
// dshportable, where the portable walk and a named temp file serve.
func Accelerated() bool { return true }

// openHandle opens name in the folder dirfd with flags, an O_PATH
// handle included, never following a final symlink.
func openHandle(dirfd int, name string, flags int) (int, error) {
	return unix.Openat(dirfd, name, flags&readFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// openat2Func is the openat2 system call's shape (walkSpec.openat2).
type openat2Func = func(dirfd int, path string, how *unix.OpenHow) (int, error)

// noOpenat2 is set once openat2 is found missing (ENOSYS: a kernel
// before 5.6, or a seccomp filter that hides it): the component walk
// serves alone from then on.
var noOpenat2 atomic.Bool

// walkAtOnce opens a path that holds no symlink in one openat2 call. It
// reports false for anything else, a symlink on the way or an error of
// any kind: the component walk then gives the answer, and its error
// names the component.
func walkAtOnce(path string, spec walkSpec) (walked, bool) {
	if noOpenat2.Load() {
		return walked{}, false
	}
	flags := spec.flags
	if spec.noSymlinks || spec.followLast {
		flags &^= unix.O_NOFOLLOW // a final symlink is then ELOOP
	} else {
		flags |= unix.O_NOFOLLOW // with O_PATH, the link itself
	}
	open := func(p string) (walked, bool) {
		how := &unix.OpenHow{Flags: uint64(flags&readFlags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		sys := unix.Openat2
		if spec.openat2 != nil {
			sys = spec.openat2
		}
		fd, err := sys(unix.AT_FDCWD, p, how)
		if err == unix.ENOSYS {
			noOpenat2.Store(true)
		}
		if err != nil {
			return walked{}, false
		}
		w := walked{fd: fd, path: filepath.Clean(p)}
		if unix.Fstat(fd, &w.st) != nil {
			unix.Close(fd)
			return walked{}, false
		}
		return w, true
	}
	if w, ok := open(path); ok || !spec.keepMissing {
		return w, ok
	}
	// A path to create: the nearest folder above it that opens at once,
	// when the name just beneath that folder is missing (a new file in a
	// folder that exists, or a new tree beneath it: the exec plan's
	// placeholders, several names deep). The names below the missing one
	// are missing with it. A "." or ".." among them, a symlink or a file
	// where the name is, is the component walk's.
	var missing []string
	for rest := path; len(missing) < maxMissingAtOnce; {
		dir, name := filepath.Split(strings.TrimRight(rest, "/"))
		if name == "" || name == "." || name == ".." || dir == "" {
			return walked{}, false
		}
		missing = append(missing, name)
		w, ok := open(dir)
		if !ok {
			rest = dir
			continue
		}
		var st unix.Stat_t
		if w.st.Mode&unix.S_IFMT != unix.S_IFDIR || unix.Fstatat(w.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
			unix.Close(w.fd)
			return walked{}, false
		}
		slices.Reverse(missing)
		w.missing = missing
		return w, true
	}
	return walked{}, false
}

// maxMissingAtOnce bounds how many missing names walkAtOnce looks above
// for a folder that exists, one openat2 each; deeper is the component
// walk's.
const maxMissingAtOnce = 8

// openUnnamed opens an unnamed file in the folder dirfd (O_TMPFILE).
// ErrUnsupported stands for a file system that lacks it: the caller then
// makes a named one.
func openUnnamed(dirfd int, perm uint32) (int, error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, perm)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		return -1, errors.ErrUnsupported
	}
	return fd, err
}

// link gives the unnamed file the name link in its folder.
func (t *Temp) link(link string) error {
	var err error = unix.ENOENT
	if proc, perr := kernel.ProcRoot(); perr == nil {
		// Through the verified /proc only: a symlink laid out on a fake
		// one would give another file the name.
		err = unix.Linkat(proc, "thread-self/fd/"+strconv.Itoa(int(t.Fd())), t.dir.fd, link, unix.AT_SYMLINK_FOLLOW)
	}
	if errors.Is(err, unix.ENOENT) {
		// No /proc: AT_EMPTY_PATH does the same where the process has
		// CAP_DAC_READ_SEARCH.
		err = unix.Linkat(int(t.Fd()), "", t.dir.fd, link, unix.AT_EMPTY_PATH)
	}
	return err
}
