package sandbox

import (
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fsys"
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
	// link is told of each symlink the walk follows, by the canonical
	// path of the link itself, before its text is walked.
	link func(path string)
	// openat2, when set (by this package's tests, to play a kernel or a
	// seccomp filter that refuses it), is called instead of the openat2
	// system call; the portable build has none to call.
	openat2 openat2Func
}

// walked is an object a walk opened: its descriptor, the path it was
// reached by, its status, and (with keepMissing) the names beyond it that
// do not exist.
type walked struct {
	fd      int
	path    string
	st      fsys.Stat_t
	missing []string
}

// canonical is the walked path with its missing part: what Canonical
// returns.
func (w walked) canonical() string {
	return joinPath(append([]string{w.path}, w.missing...)...)
}

// readFlags are the only open flags the resolver passes to the kernel:
// nothing it opens is opened for writing or created.
const readFlags = oPath | fsys.O_DIRECTORY | fsys.O_NOFOLLOW | fsys.O_NONBLOCK | fsys.O_NOCTTY

// emptySymlink is a symlink with no text: it leads nowhere, as ENOENT
// says, but Canonical reports it as bad input.
type emptySymlink struct{}

func (emptySymlink) Error() string        { return "an empty symlink" }
func (emptySymlink) Is(target error) bool { return target == fsys.ENOENT }

// refusedDespiteBits marks a mkdir the kernel refused (EACCES) where the
// folder's permission bits allow it: Landlock's refusal, where it is in
// place (faccessat consults the permission bits, not Landlock).
type refusedDespiteBits struct{ *os.PathError }

func (e refusedDespiteBits) Unwrap() error { return e.PathError }

// openRead opens name in the folder dirfd (or an absolute name) without
// following a final symlink, with only readFlags.
func openRead(dirfd int, name string, flags int) (int, error) {
	for range maxRaceRetries {
		fd, err := openHandle(dirfd, name, flags)
		if err == fsys.EINTR {
			continue // a signal during a slow open (a FIFO, a network file system)
		}
		return fd, err
	}
	return -1, fsys.EINTR
}

// walkPath walks the absolute path from "/".
//
// Errors are *os.PathError with the errno the kernel gave (ENOENT,
// ENOTDIR, EACCES…) naming the path walked so far; ELOOP for a symlink
// refused or past maxSymlinkHops links; or the folder check's error.
func walkPath(path string, spec walkSpec) (walked, error) {
	if spec.folder == nil && spec.link == nil && !spec.mkdir {
		if w, ok := walkAtOnce(path, spec); ok {
			return w, nil
		}
	}
	root, err := openRead(fsys.AT_FDCWD, "/", oPath|fsys.O_DIRECTORY)
	if err != nil {
		return walked{}, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	defer fsys.Close(root)
	return walkFrom(root, "/", path, spec)
}

// walkFrom walks rel from the folder start (open as a descriptor, at the
// canonical startPath; it stays open). ".." may not leave start unless
// start is "/" (EXDEV, as RESOLVE_BENEATH says), and an absolute symlink
// starts again from "/". It is a loop over the components left to walk,
// one step for each kind: ".", "..", a name past the part that exists, a
// name (a folder, a symlink or the object), and the end of the path.
func walkFrom(start int, startPath, rel string, spec walkSpec) (walked, error) {
	w := &walker{spec: spec, startPath: startPath, held: []int{start}, pending: splitPath(rel)}
	defer w.release()
	for len(w.pending) > 0 {
		name := w.pending[0]
		w.pending = w.pending[1:]
		switch {
		case len(w.missing) > 0:
			w.stepMissing(name)
		case name == ".":
		case name == "..":
			if err := w.stepDotDot(); err != nil {
				return walked{}, err
			}
		default:
			if obj, done, err := w.stepName(name); done || err != nil {
				return obj, err
			}
		}
	}
	return w.end()
}

// walker is one walk in progress (walkFrom).
type walker struct {
	spec      walkSpec
	startPath string
	held      []int    // held[i] is the folder of names[:i]; held[0] is the start, not ours to close
	names     []string // the names walked from the start to the folder held last
	pending   []string // the components left to walk
	missing   []string // with keepMissing: the names past the part that exists
	hops      int      // symlinks followed, at most maxSymlinkHops
	retries   int      // looks again at a last name that changed, at most maxRaceRetries
}

// release closes the folders the walk opened.
func (w *walker) release() {
	for _, fd := range w.held[1:] {
		fsys.Close(fd)
	}
	w.held = w.held[:1]
}

// dir is the folder held last.
func (w *walker) dir() int { return w.held[len(w.held)-1] }

// at is the path of name in the folder held last.
func (w *walker) at(name string) string {
	return joinPath(append(append([]string{w.startPath}, w.names...), name)...)
}

func fail(op, path string, errno error) error {
	return &os.PathError{Op: op, Path: path, Err: errno}
}

// stepMissing walks a name past the part that exists: by name, since a
// name that does not exist cannot be a symlink.
func (w *walker) stepMissing(name string) {
	switch name {
	case ".":
	case "..":
		w.missing = w.missing[:len(w.missing)-1]
	default:
		w.missing = append(w.missing, name)
	}
}

// stepDotDot goes back to the folder held before, never looked up by
// name; at the start it stays in "/" and refuses anywhere else.
func (w *walker) stepDotDot() error {
	if len(w.names) == 0 {
		if w.startPath != "/" {
			return fail("open", w.startPath+"/..", fsys.EXDEV)
		}
		return nil // "/.." is "/"
	}
	fsys.Close(w.dir())
	w.held, w.names = w.held[:len(w.held)-1], w.names[:len(w.names)-1]
	return nil
}

// stepName walks one name in the folder held last: the object, at once
// where it can be; otherwise a look at it as a handle, then a step by
// what it is. done says the walk ended, with the object or an error.
func (w *walker) stepName(name string) (obj walked, done bool, err error) {
	last := len(w.pending) == 0
	if last && w.spec.flags&oPath == 0 {
		if obj, done, err := w.openLast(name); done {
			return obj, true, err
		}
	}
	fd, err := w.look(name)
	if err == fsys.ENOENT && w.spec.keepMissing {
		w.missing = []string{name}
		return walked{}, false, nil
	}
	if err != nil {
		return walked{}, true, err
	}
	name = nameOnDisk(fd, name)
	var st fsys.Stat_t
	if err := fsys.Fstat(fd, &st); err != nil {
		fsys.Close(fd)
		return walked{}, true, fail("fstat", w.at(name), err)
	}
	typ := uint32(st.Mode & fsys.S_IFMT)
	switch {
	case typ == fsys.S_IFLNK && w.spec.noSymlinks:
		fsys.Close(fd)
		return walked{}, true, fail("open", w.at(name), fsys.ELOOP)
	case typ == fsys.S_IFLNK && (!last || w.spec.followLast):
		return walked{}, false, w.stepSymlink(fd, name)
	case last:
		return w.stepLast(fd, name, typ)
	case typ == fsys.S_IFDIR:
		return walked{}, false, w.stepFolder(fd, name)
	}
	fsys.Close(fd)
	return walked{}, true, fail("open", w.at(name), fsys.ENOTDIR)
}

// openLast opens the last name as the object, at once: the common case.
// A symlink there fails with ELOOP (O_NOFOLLOW), or with ENOTDIR under
// O_DIRECTORY, and a missing folder may be made: those are looked at
// again as a handle (done false).
func (w *walker) openLast(name string) (obj walked, done bool, err error) {
	fd, err := openRead(w.dir(), name, w.spec.flags)
	if err == nil {
		obj, err := w.finish(fd, w.at(nameOnDisk(fd, name)))
		return obj, true, err
	}
	lookAgain := err == fsys.ELOOP || err == fsys.ENOTDIR && w.spec.flags&fsys.O_DIRECTORY != 0 || err == fsys.ENOENT && w.spec.mkdir
	if lookAgain {
		return walked{}, false, nil
	}
	return walked{}, true, fail("open", w.at(name), err)
}

// look opens name as an O_PATH handle, the link itself for a symlink;
// with mkdir a missing folder is made first.
func (w *walker) look(name string) (int, error) {
	dir := w.dir()
	fd, err := openRead(dir, name, oPath)
	if err == fsys.ENOENT && w.spec.mkdir {
		if err = fsys.Mkdirat(dir, name, 0o777); err != nil && err != fsys.EEXIST {
			perr := &os.PathError{Op: "mkdir", Path: w.at(name), Err: err}
			if err == fsys.EACCES && fsys.Faccessat(dir, ".", fsys.W_OK, fsys.AT_EACCESS) == nil {
				return -1, refusedDespiteBits{perr}
			}
			return -1, perr
		}
		fd, err = openRead(dir, name, oPath)
	}
	if err != nil && !(err == fsys.ENOENT && w.spec.keepMissing) {
		return -1, fail("open", w.at(name), err)
	}
	return fd, err
}

// stepFolder holds the folder fd, reached by name, and decides on it.
func (w *walker) stepFolder(fd int, name string) error {
	w.held, w.names = append(w.held, fd), append(w.names, name)
	if w.spec.folder != nil {
		return w.spec.folder(fd, w.at(""))
	}
	return nil
}

// stepLast is the last name looked at as a handle fd of type typ: the
// object under O_PATH; otherwise it is not what openLast saw (a symlink
// then, or missing), and it is looked at again, a bounded number of
// times.
func (w *walker) stepLast(fd int, name string, typ uint32) (obj walked, done bool, err error) {
	switch {
	case w.spec.flags&oPath != 0:
		obj, err := w.finish(fd, w.at(name)) // any type, the link itself included
		return obj, true, err
	case w.spec.flags&fsys.O_DIRECTORY != 0 && typ != fsys.S_IFDIR:
		fsys.Close(fd)
		return walked{}, true, fail("open", w.at(name), fsys.ENOTDIR)
	}
	fsys.Close(fd)
	if w.retries++; w.retries > maxRaceRetries {
		return walked{}, true, fail("open", w.at(name), fsys.EAGAIN)
	}
	w.pending = []string{name}
	return walked{}, false, nil
}

// stepSymlink reads the symlink fd, reached by name, and puts its text in
// front of what is left to walk; an absolute one starts again from "/",
// and only a walk from "/" may take one (EXDEV).
func (w *walker) stepSymlink(fd int, name string) error {
	target, err := linkText(fd)
	fsys.Close(fd)
	if err != nil {
		return fail("readlink", w.at(name), err)
	}
	if w.hops++; w.hops > maxSymlinkHops {
		return fail("open", w.at(name), fsys.ELOOP)
	}
	if w.spec.link != nil {
		w.spec.link(w.at(name))
	}
	if target == "" {
		return fail("open", w.at(name), emptySymlink{})
	}
	if strings.HasPrefix(target, "/") {
		if w.startPath != "/" {
			return fail("open", w.at(name), fsys.EXDEV)
		}
		w.release()
		w.names = nil
	}
	w.pending = append(splitPath(target), w.pending...)
	return nil
}

// end is the walk of a path that ends in "/", "." or "..", or in names
// that do not exist: the folder held is the object.
func (w *walker) end() (walked, error) {
	flags := w.spec.flags
	if len(w.missing) > 0 {
		flags = oPath | fsys.O_DIRECTORY
	}
	fd, err := openRead(w.dir(), ".", flags)
	if err != nil {
		return walked{}, fail("open", w.at(""), err)
	}
	obj, err := w.finish(fd, w.at(""))
	obj.missing = w.missing
	return obj, err
}

// finish makes fd, reached at path, the object, and decides on it where
// it is a folder.
func (w *walker) finish(fd int, path string) (walked, error) {
	obj := walked{fd: fd, path: path}
	if err := fsys.Fstat(fd, &obj.st); err != nil {
		fsys.Close(fd)
		return walked{}, fail("fstat", path, err)
	}
	if w.spec.folder != nil && obj.st.Mode&fsys.S_IFMT == fsys.S_IFDIR {
		if err := w.spec.folder(fd, path); err != nil {
			fsys.Close(fd)
			return walked{}, err
		}
	}
	return obj, nil
}

// readlinkat reads the symlink name in dirfd ("" with an O_PATH handle on
// the link itself).
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := fsys.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<20 {
			return "", fsys.ENAMETOOLONG
		}
	}
}
