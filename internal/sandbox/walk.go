package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The one resolver (docs/design.md §4). Every path dsh-fs acts on is
// resolved by walkPath or walkFrom: canonicalization, the reads' opens,
// the folders a mutation happens in, listing, search, the mount planner
// and the git guard. It opens one component at a time, each by name in
// the folder opened before it, and never lets the kernel follow a
// symlink: a symlink met is either refused (the path was canonical, so
// one there now is a swap) or read and its text resolved here, so the
// path of what was opened is the path walked whatever was swapped
// meanwhile, with no /proc needed to know it. ".." goes back to the
// folder held before, never looked up by name. Where the kernel has
// openat2, a path with no symlink in it at all is opened in one call
// (RESOLVE_NO_SYMLINKS), which is the common case; anything else takes
// the component walk, whose answer is the same.

// walkSpec says how a path is walked and what is opened at its end.
type walkSpec struct {
	// flags open the object the path names (O_PATH for a handle on it);
	// only readFlags reach the kernel.
	flags int
	// noSymlinks refuses a symlink anywhere on the way, the last
	// component included, with ELOOP. Otherwise a symlink is read and
	// its text resolved here.
	noSymlinks bool
	// followLast follows a final symlink too; without it (and with
	// O_PATH) the link itself is the object.
	followLast bool
	// keepMissing keeps the part of the path that does not exist by
	// name (walked.missing), as a path to create; the object is then the
	// last folder that exists. With O_PATH only.
	keepMissing bool
	// mkdir makes missing folders, one at a time, each through the
	// handle of its parent.
	mkdir bool
	// folder decides on each folder the walk opens past its start, the
	// object included when it is a folder; its error ends the walk.
	folder func(fd int, path string) error
}

// walked is an object a walk opened: its descriptor, the path it was
// reached by, its status, and (with keepMissing) the names beyond it that
// do not exist.
type walked struct {
	fd      int
	path    string
	st      unix.Stat_t
	missing []string
}

// canonical is the walked path with its missing part: what Canonical
// returns.
func (w walked) canonical() string {
	return filepath.Join(append([]string{w.path}, w.missing...)...)
}

// readFlags are the only open flags the resolver passes to the kernel:
// nothing it opens is opened for writing or created.
const readFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY

// emptySymlink is a symlink with no text: it leads nowhere, as ENOENT
// says, but Canonical reports it as bad input.
type emptySymlink struct{}

func (emptySymlink) Error() string        { return "an empty symlink" }
func (emptySymlink) Is(target error) bool { return target == unix.ENOENT }

// refusedDespiteBits marks a mkdir the kernel refused (EACCES) where the
// folder's permission bits allow it: Landlock's refusal, where it is in
// place (faccessat consults the permission bits, not Landlock).
type refusedDespiteBits struct{ *os.PathError }

func (e refusedDespiteBits) Unwrap() error { return e.PathError }

// openRead opens name in the folder dirfd (or an absolute name) without
// following a final symlink, with only readFlags.
func openRead(dirfd int, name string, flags int) (int, error) {
	for range maxRaceRetries {
		fd, err := unix.Openat(dirfd, name, flags&readFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue // a signal during a slow open (a FIFO, a network file system)
		}
		return fd, err
	}
	return -1, unix.EINTR
}

// walkPath walks the absolute path from "/".
//
// Errors are *os.PathError with the errno the kernel gave (ENOENT,
// ENOTDIR, EACCES…) naming the path walked so far; ELOOP for a symlink
// refused or past maxSymlinkHops links; or the folder check's error.
func walkPath(path string, spec walkSpec) (walked, error) {
	if spec.folder == nil && !spec.mkdir {
		if w, ok := walkAtOnce(path, spec); ok {
			return w, nil
		}
	}
	root, err := openRead(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return walked{}, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	defer unix.Close(root)
	return walkFrom(root, "/", path, spec)
}

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
		fd, err := sysOpenat2(unix.AT_FDCWD, p, how)
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
	// A path to create: its folder, at once, when only its last name is
	// missing (a new file in a folder that exists).
	dir, name := filepath.Split(strings.TrimRight(path, "/"))
	if name == "" || name == "." || name == ".." || dir == "" {
		return walked{}, false
	}
	var st unix.Stat_t
	w, ok := open(dir)
	if !ok {
		return walked{}, false
	}
	if w.st.Mode&unix.S_IFMT != unix.S_IFDIR || unix.Fstatat(w.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
		unix.Close(w.fd)
		return walked{}, false
	}
	w.missing = []string{name}
	return w, true
}

// walkFrom walks rel from the folder start (open as a descriptor, at the
// canonical startPath; it stays open). ".." may not leave start unless
// start is "/" (EXDEV, as RESOLVE_BENEATH says), and an absolute symlink
// starts again from "/".
func walkFrom(start int, startPath, rel string, spec walkSpec) (w walked, err error) {
	held := []int{start} // held[i] is the folder of names[:i]
	var names []string
	defer func() {
		for _, fd := range held[1:] {
			unix.Close(fd)
		}
	}()
	at := func(name string) string {
		return filepath.Join(append(append([]string{startPath}, names...), name)...)
	}
	fail := func(op, path string, errno error) (walked, error) {
		return walked{}, &os.PathError{Op: op, Path: path, Err: errno}
	}
	// finish makes fd, reached at path, the object.
	finish := func(fd int, path string) (walked, error) {
		w.fd, w.path = fd, path
		if err := unix.Fstat(fd, &w.st); err != nil {
			unix.Close(fd)
			return fail("fstat", path, err)
		}
		if spec.folder != nil && w.st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := spec.folder(fd, path); err != nil {
				unix.Close(fd)
				return walked{}, err
			}
		}
		return w, nil
	}
	pending := splitPath(rel)
	hops, retries := 0, 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if len(w.missing) > 0 {
			// Past the part that exists: by name, since a name that
			// does not exist cannot be a symlink.
			switch name {
			case ".":
			case "..":
				w.missing = w.missing[:len(w.missing)-1]
			default:
				w.missing = append(w.missing, name)
			}
			continue
		}
		switch name {
		case ".":
			continue
		case "..":
			if len(names) == 0 {
				if startPath != "/" {
					return fail("open", startPath+"/..", unix.EXDEV)
				}
				continue // "/.." is "/"
			}
			unix.Close(held[len(held)-1])
			held, names = held[:len(held)-1], names[:len(names)-1]
			continue
		}
		dir := held[len(held)-1]
		last := len(pending) == 0
		if last && spec.flags&unix.O_PATH == 0 {
			// The common case: the object itself, opened at once. A
			// symlink there fails with ELOOP (O_NOFOLLOW), or with
			// ENOTDIR under O_DIRECTORY; a missing folder may be made.
			fd, err := openRead(dir, name, spec.flags)
			if err == nil {
				return finish(fd, at(name))
			}
			lookAgain := err == unix.ELOOP || err == unix.ENOTDIR && spec.flags&unix.O_DIRECTORY != 0 || err == unix.ENOENT && spec.mkdir
			if !lookAgain {
				return fail("open", at(name), err)
			}
		}
		// A folder on the way, a symlink, a folder to make, or an O_PATH
		// handle: look at it as a handle.
		fd, err := openRead(dir, name, unix.O_PATH)
		if err == unix.ENOENT && spec.mkdir {
			if err = unix.Mkdirat(dir, name, 0o777); err != nil && err != unix.EEXIST {
				perr := &os.PathError{Op: "mkdir", Path: at(name), Err: err}
				if err == unix.EACCES && unix.Faccessat(dir, ".", unix.W_OK, unix.AT_EACCESS) == nil {
					return walked{}, refusedDespiteBits{perr}
				}
				return walked{}, perr
			}
			fd, err = openRead(dir, name, unix.O_PATH)
		}
		if err == unix.ENOENT && spec.keepMissing {
			w.missing = []string{name}
			continue
		}
		if err != nil {
			return fail("open", at(name), err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fail("fstat", at(name), err)
		}
		typ := st.Mode & unix.S_IFMT
		switch {
		case typ == unix.S_IFLNK && spec.noSymlinks:
			unix.Close(fd)
			return fail("open", at(name), unix.ELOOP)
		case typ == unix.S_IFLNK && (!last || spec.followLast):
			// Followed below.
		case last && spec.flags&unix.O_PATH != 0:
			return finish(fd, at(name)) // an O_PATH handle: any type, the link itself included
		case last && spec.flags&unix.O_DIRECTORY != 0 && typ != unix.S_IFDIR:
			unix.Close(fd)
			return fail("open", at(name), unix.ENOTDIR)
		case last:
			// Not what the first look saw (a symlink then, or missing):
			// look again, a bounded number of times.
			unix.Close(fd)
			if retries++; retries > maxRaceRetries {
				return fail("open", at(name), unix.EAGAIN)
			}
			pending = []string{name}
			continue
		case typ == unix.S_IFDIR:
			held, names = append(held, fd), append(names, name)
			if spec.folder != nil {
				if err := spec.folder(fd, at("")); err != nil {
					return walked{}, err
				}
			}
			continue
		default:
			unix.Close(fd)
			return fail("open", at(name), unix.ENOTDIR)
		}
		target, err := readlinkat(fd, "")
		unix.Close(fd)
		if err != nil {
			return fail("readlink", at(name), err)
		}
		if hops++; hops > maxSymlinkHops {
			return fail("open", at(name), unix.ELOOP)
		}
		if target == "" {
			return fail("open", at(name), emptySymlink{})
		}
		if strings.HasPrefix(target, "/") {
			if startPath != "/" {
				return fail("open", at(name), unix.EXDEV)
			}
			for _, fd := range held[1:] {
				unix.Close(fd)
			}
			held, names = held[:1], nil
		}
		pending = append(splitPath(target), pending...)
	}
	// The path ends in "/", "." or "..", or in names that do not exist:
	// the folder held is the object.
	flags := spec.flags
	if len(w.missing) > 0 {
		flags = unix.O_PATH | unix.O_DIRECTORY
	}
	fd, err := openRead(held[len(held)-1], ".", flags)
	if err != nil {
		return fail("open", at(""), err)
	}
	missing := w.missing
	w, err = finish(fd, at(""))
	w.missing = missing
	return w, err
}

// readlinkat reads the symlink name in dirfd ("" with an O_PATH handle on
// the link itself).
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<20 {
			return "", unix.ENAMETOOLONG
		}
	}
}

// OpenNoSymlinks opens the canonical path with flags (only readFlags
// reach the kernel), refusing a symlink anywhere on the way, the last
// component included, with ELOOP: the path was canonical when it was
// resolved, so a symlink there now was put there since. The mount layer
// and the git guard open what they act on through it.
func OpenNoSymlinks(path string, flags int) (int, error) {
	w, err := walkPath(path, walkSpec{flags: flags, noSymlinks: true})
	if err != nil {
		return -1, err
	}
	return w.fd, nil
}
