package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// Dir is the folder a mutation happens in, opened as a file descriptor:
// in workspace-write mode through a resolution confined beneath the
// matched writable root, in danger-full-access mode plainly. Every method
// takes a single name inside the folder and never follows a symlink in
// that name, so nothing done through a Dir can land outside the folder it
// was opened on.
type Dir struct {
	fd int
	// Path is the folder's canonical path, for messages.
	Path string
	// escaped turns a symlink met at use time into a denial; nil in
	// danger-full-access mode, where there is no fence to escape.
	escaped func(error) error
	// kernelDenied turns a write the kernel layer refused into a denial;
	// nil when Landlock is not in place.
	kernelDenied func(error) error
	// unlock releases the lock on the root that a write of a part of a
	// git directory holds until Close (see openConfined); nil when none.
	unlock func()
}

// openDir opens the folder holding t for a mutation, after CheckWrite
// (Lock, Mkdir, Remove, Move), and returns it and t's name in it. It
// re-canonicalizes t first and denies a path that no longer resolves to
// what was checked; with mkdir it makes missing folders one at a time,
// each through its parent's confined handle. In workspace-write mode it
// decides on what it opened: a folder holding a git directory, or one now
// under a protected glob, is protected; one moved anywhere else is an
// escape (openConfined). A writable root itself is FS_IS_DIR.
func (f *Fence) openDir(op string, t Target, mkdir bool) (*Dir, string, error) {
	resolve := f.Resolve
	if t.name {
		resolve = f.ResolveName
	}
	now, err := resolve(t.Given)
	if err != nil {
		return nil, "", err
	}
	again := now.Path
	if again != t.Path {
		if f.mode == policy.DangerFullAccess {
			return nil, "", stale(op, t, fmt.Errorf("%s now resolves to %s", t.Given, again))
		}
		return nil, "", f.escaped(op, t, fmt.Errorf("%s now resolves to %s", t.Given, again))
	}
	// The fence decides here, on the path as it resolves now, whatever
	// the caller's Target says: its verdict is what an earlier
	// CheckWrite found, or what code in this package forged. A denied
	// target is refused as CheckWrite refuses it (after an escalation
	// the fence's mode is the granted one).
	t = now
	if reason, matched, needed := f.writeVerdict(&t); reason != "" {
		return nil, "", f.denial(op, t, reason, matched, needed)
	}
	if err := f.checkApproved(op, t); err != nil {
		return nil, "", err
	}
	// The kernel layer is in place before the first folder is opened for
	// a mutation: no operation can open one without it.
	if err := f.Enforce(); err != nil {
		return nil, "", err
	}
	if t.Path == "/" || t.root != "" && t.rel == "." {
		// A writable root is a folder. Split into folder and name, it
		// would name the root's parent, outside the confined handle, or
		// (split by Rel) a file named like the root inside it.
		return nil, "", fserr.New(fserr.IsDir, op+": "+t.Given+": is a folder")
	}
	name := baseOf(t.Path)
	parent := dirOf(t.Path)
	if f.mode == policy.DangerFullAccess {
		d, err := openPinned(op, t, parent, mkdir)
		if err != nil {
			return nil, "", err
		}
		return d, name, nil
	}
	d, err := f.openConfined(op, t, t.root, dirOf(t.rel), mkdir)
	if err != nil {
		return nil, "", err
	}
	if err := f.checkOpened(op, t, d, name); err != nil {
		d.Close()
		return nil, "", err
	}
	return d, name, nil
}

// openPinned opens the folder parent of t in danger-full-access mode:
// that mode widens where a write may land, never how its path is opened.
// parent is canonical (what the approver of an escalation was shown), so
// it is walked from "/" one component at a time through no symlink at
// all, missing folders made one at a time with mkdir, and read back from
// the handle once opened: a folder swapped for a symlink, or moved,
// since t was resolved carries the write somewhere nobody saw, and is
// FS_STALE. Names met later in the folder are never followed either.
func openPinned(op string, t Target, parent string, mkdir bool) (*Dir, error) {
	w, err := walkPath(parent, walkSpec{flags: fsys.O_RDONLY | fsys.O_DIRECTORY, noSymlinks: true, mkdir: mkdir})
	switch {
	case isEscape(err):
		return nil, stale(op, t, fmt.Errorf("%s is a symlink by now", walkedSoFar(err)))
	case errors.Is(err, fsys.ENOENT):
		return nil, missingFolder(op, t, walkedSoFar(err), err)
	case err != nil:
		return nil, fserr.FromOS(op, walkedSoFar(err), err)
	}
	cur, curPath := w.fd, w.path
	d := &Dir{fd: cur, Path: curPath, escaped: func(err error) error { return stale(op, t, err) }}
	opened, err := openedPath(cur)
	if err != nil {
		d.Close()
		return nil, unverified(op, t, err)
	}
	if opened != curPath {
		d.Close()
		return nil, stale(op, t, fmt.Errorf("the folder opened as %s is %s by now", curPath, opened))
	}
	return d, nil
}

// unverified is a mutation refused because what was opened for it could
// not be verified: its path cannot be read back from a verified /proc.
func unverified(op string, t Target, cause error) error {
	e := fserr.Wrap(fserr.IO, fmt.Sprintf("%s: %s: the folder opened for it cannot be verified (%v); nothing was written", op, t.Given, cause), cause)
	e.Hint = "mount a procfs on /proc"
	return e
}

// stale is a path that changed between its resolution (what the caller,
// or an approver, was shown) and the mutation.
func stale(op string, t Target, cause error) error {
	return fserr.Wrap(fserr.Stale, fmt.Sprintf("%s: %s: the path changed since it was resolved to %s (%v); nothing was written", op, t.Given, t.Path, cause), cause)
}

// checkOpened decides on the folder opened rather than on the name that
// was checked: its real path, read back from the handle, must be the path
// it was opened as, since a folder moved or exchanged between the check
// and the open (d and .git swapped) carries the write somewhere the check
// never saw. A folder that now sits under a protected path is denied as
// protected, any other move as an escape. Without a verified /proc there
// is no path to read back, and the write is refused (FS_IO), never
// decided on the name that was checked.
func (f *Fence) checkOpened(op string, t Target, d *Dir, name string) error {
	opened, err := openedPath(d.fd)
	if err != nil {
		return unverified(op, t, err)
	}
	if rel, ok := pathmatch.Within(t.root, opened); ok {
		target := joinPath(opened, name)
		if g, hit := f.protectedIn(joinPath(rel, name), target); hit {
			return f.protectedDenied(op, t, g)
		}
		if g, hit := pathmatch.GitProtectedIn(joinPath(rel, name), target, f.gitPointed); hit {
			return f.protectedDenied(op, t, g)
		}
	}
	if opened != d.Path {
		return f.escaped(op, t, fmt.Errorf("the folder opened as %s is %s by now", d.Path, opened))
	}
	return nil
}

func (f *Fence) openConfined(op string, t Target, root, rel string, mkdir bool) (d *Dir, err error) {
	// The root itself is canonical: opened from "/" with no symlink
	// allowed, so a root swapped for a symlink after the check is refused
	// too.
	w, err := walkPath(root, walkSpec{flags: fsys.O_RDONLY | fsys.O_DIRECTORY, noSymlinks: true})
	if err != nil {
		return nil, f.confinedErr(op, t, err)
	}
	rootFD := w.fd
	cur, curPath := rootFD, root
	// A write whose first name is a part of a git directory (HEAD,
	// objects, refs, commondir) must not complete one at the top of the
	// root, and several processes each adding a part must not either: the
	// check and the creation of that name happen under an exclusive lock
	// on the root, held until the Dir is closed, after the commit. Only
	// such writes take it; the check looks at the root opened.
	held := -1
	defer func() {
		if err != nil {
			if cur != held {
				fsys.Close(cur)
			}
			if held >= 0 {
				fsys.Close(held)
			}
		}
	}()
	first, _, _ := strings.Cut(t.rel, "/")
	if slices.Contains(pathmatch.GitDirParts, first) {
		if err := flock(rootFD); err != nil {
			return nil, t.osError(op, fmt.Errorf("locking the root %s: %w", root, err))
		}
		held = rootFD
		if pathmatch.CompletesGitDirAt(rootFD, first) {
			return nil, f.denial(op, t, policy.ReasonBareRepo, "", policy.DangerFullAccess)
		}
	}
	// Every folder on the way is looked at once opened: a git directory
	// is protected by what it holds, so one exchanged into the path after
	// the check is caught whatever it is called by now, where what is
	// left of the path is one of its protected parts.
	gitDirs := func(fd int, path string) error {
		if rest, ok := pathmatch.Within(path, t.Path); ok && pathmatch.GitPartProtectedAt(fd, rest) {
			return f.protectedDenied(op, t, path)
		}
		return nil
	}
	if err := gitDirs(rootFD, root); err != nil {
		return nil, err
	}
	if rel != "." {
		w, err := walkFrom(rootFD, root, rel, walkSpec{flags: fsys.O_RDONLY | fsys.O_DIRECTORY, noSymlinks: true, mkdir: mkdir, folder: gitDirs})
		var landlock refusedDespiteBits
		switch {
		case errors.As(err, &landlock) && f.enforced:
			// A folder Landlock refused to make is a denial.
			return nil, f.kernelRefused(op, t, landlock.PathError)
		case errors.As(err, new(*policy.DeniedError)):
			return nil, err
		case err != nil:
			return nil, f.confinedErr(op, t, err)
		}
		if held < 0 {
			fsys.Close(rootFD)
		}
		cur, curPath = w.fd, w.path
	}
	d = &Dir{fd: cur, Path: curPath, escaped: func(err error) error { return f.escaped(op, t, err) }}
	if f.enforced {
		d.kernelDenied = func(err error) error { return f.kernelRefused(op, t, err) }
	}
	if held >= 0 && held != cur {
		d.unlock = func() { fsys.Close(held) }
	}
	return d, nil
}

// flock takes an exclusive lock on the open folder fd, waiting for it. A
// wait a signal interrupts (EINTR) is taken up again, at most
// maxInterruptedTries times in all, as every retry here is bounded: a
// process signalling this one in a loop must not keep it spinning.
func flock(fd int) error { return flockWith(fsys.LockFolder, fd) }

// flockWith is flock through the system call sys (fsys.Flock, or a
// test's).
func flockWith(sys func(fd, how int) error, fd int) error {
	for range maxInterruptedTries {
		err := sys(fd, fsys.LOCK_EX)
		if err != fsys.EINTR {
			return os.NewSyscallError("flock", err)
		}
	}
	return errFlockRetries
}

// errFlockRetries is flock still interrupted after maxInterruptedTries
// tries. (Not fmt.Errorf: that would format it at every start.)
var errFlockRetries = errors.New("flock still interrupted by signals after " + strconv.Itoa(maxInterruptedTries) + " tries")

// maxInterruptedTries bounds how often a call a signal interrupted
// (EINTR) is taken up again: a process signalling this one in a loop
// must not keep it spinning.
const maxInterruptedTries = 32

// confinedErr classifies a failure of the confined resolution: an escape
// is a denial, a missing folder FS_NOT_FOUND, anything else keeps the
// OS's code.
func (f *Fence) confinedErr(op string, t Target, err error) error {
	path := walkedSoFar(err)
	if isEscape(err) {
		return f.escaped(op, t, err)
	}
	if errors.Is(err, fsys.ENOENT) {
		return missingFolder(op, t, path, err)
	}
	return fserr.FromOS(op, path, err)
}

// missingFolder is a mutation's folder that does not exist, when it was
// not to be made.
func missingFolder(op string, t Target, path string, err error) error {
	return MissingFolder(op, t.Given, path, err)
}

// MissingFolder is the FS_NOT_FOUND of op on given, whose folder path does
// not exist, with a hint of the way to make it that op has.
func MissingFolder(op, given, path string, err error) error {
	e := fserr.Wrap(fserr.NotFound, fmt.Sprintf("%s: %s: folder %s does not exist", op, given, path), err)
	switch op {
	case "mkdir":
		e.Hint = "add --parents to make the missing folders too"
	case "move", "rm":
		e.Hint = "dsh-fs mkdir --parents makes a folder and the missing ones above it"
	default:
		e.Hint = "add --mkdir to create missing folders"
	}
	return e
}

// isEscape is the one place that recognizes a confined resolution refused
// for leaving its root: EXDEV (".." or an absolute path out of the folder
// the walk started at), ELOOP (a symlink where the checked path had
// none).
func isEscape(err error) bool {
	return errors.Is(err, fsys.EXDEV) || errors.Is(err, fsys.ELOOP)
}

// kernelRefused is a write Landlock refused: the fence passed it, so the
// path must have changed under it.
func (f *Fence) kernelRefused(op string, t Target, cause error) error {
	return f.denial(op, t, policy.ReasonLandlock, cause.Error(), policy.DangerFullAccess)
}

// refused classifies a mutation's failure in the folder: EACCES where the
// file's permission bits allow the write can only be Landlock's refusal
// (faccessat consults the permission bits, not Landlock).
func (d *Dir) refused(err error) error {
	if d.kernelDenied != nil && errors.Is(err, fsys.EACCES) && fsys.Faccessat(d.fd, ".", fsys.W_OK, fsys.AT_EACCESS) == nil {
		return d.kernelDenied(err)
	}
	return err
}

// protectedDenied is a protected path found on what was opened.
func (f *Fence) protectedDenied(op string, t Target, matched string) error {
	return f.denial(op, t, policy.ReasonProtected, matched, policy.DangerFullAccess)
}

func (f *Fence) escaped(op string, t Target, cause error) error {
	return f.denial(op, t, policy.ReasonEscaped, cause.Error(), policy.DangerFullAccess)
}

// Close releases the folder, and the lock on the root, if it holds one.
func (d *Dir) Close() error {
	if d.unlock != nil {
		d.unlock()
		d.unlock = nil
	}
	return fsys.Close(d.fd)
}

// oneEntry refuses a name that is not one entry of the folder at path:
// empty, ".", "..", or holding a "/". A handle's methods act on a
// single name, so nothing done through one lands outside its folder,
// whatever name a caller passes.
func oneEntry(path, name string) error {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return fserr.New(fserr.InvalidArgument, path+": "+strconv.Quote(name)+" is not one entry of the folder")
	}
	return nil
}

// Open opens name in the folder without following a symlink: a name that
// is a symlink at this moment is denied as an escape (the checked path had
// none) rather than followed.
func (d *Dir) Open(name string, flags int, perm uint32) (*os.File, error) {
	if err := oneEntry(d.Path, name); err != nil {
		return nil, err
	}
	fd, err := fsys.Openat(d.fd, name, flags|fsys.O_NOFOLLOW|fsys.O_CLOEXEC, perm)
	if err != nil {
		perr := &os.PathError{Op: "open", Path: joinPath(d.Path, name), Err: err}
		if errors.Is(err, fsys.ELOOP) && d.escaped != nil {
			return nil, d.escaped(perr)
		}
		return nil, d.refused(perr)
	}
	return os.NewFile(uintptr(fd), joinPath(d.Path, name)), nil
}

// Access checks name in the folder for the access mode (fsys.W_OK…) with
// the effective user and groups, as the OS decides permission, without
// following a symlink in name.
func (d *Dir) Access(name string, mode uint32) error {
	if err := oneEntry(d.Path, name); err != nil {
		return err
	}
	if err := fsys.Faccessat(d.fd, name, mode, fsys.AT_EACCESS|fsys.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "access", Path: joinPath(d.Path, name), Err: err}
	}
	return nil
}

// Lstat describes name in the folder without following a symlink.
func (d *Dir) Lstat(name string) (fsys.Stat_t, error) {
	var st fsys.Stat_t
	if err := oneEntry(d.Path, name); err != nil {
		return st, err
	}
	err := fsys.Fstatat(d.fd, name, &st, fsys.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return st, &os.PathError{Op: "stat", Path: joinPath(d.Path, name), Err: err}
	}
	return st, nil
}

// TempFile creates the file that will replace (replaces) or create the
// entry name of the folder, open for reading too so the writer can hash
// what it wrote. It is unnamed (O_TMPFILE) where it can be: a crash or a
// kill leaves nothing. Otherwise (macOS, -tags dshportable, a file system
// without O_TMPFILE) it is named, O_EXCL, and Discard removes it: for a
// replacement, name's staging name (the caller holds name's lock, so a
// file there is a killed writer's, removed first); for a create, a
// random hidden name.
func (d *Dir) TempFile(name string, replaces bool, perm uint32) (*Temp, error) {
	if err := oneEntry(d.Path, name); err != nil {
		return nil, err
	}
	fd, err := openUnnamed(d.fd, perm)
	if err == nil {
		return &Temp{File: os.NewFile(uintptr(fd), joinPath(d.Path, "(unnamed)")), dir: d}, nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return nil, d.refused(&os.PathError{Op: "create temp file in", Path: d.Path, Err: err})
	}
	if replaces {
		link := stagingName(name)
		fsys.Unlinkat(d.fd, link, 0) // a leftover of a killed writer
		file, err := d.Open(link, fsys.O_RDWR|fsys.O_CREAT|fsys.O_EXCL, perm)
		if err != nil {
			return nil, err
		}
		return &Temp{File: file, dir: d, name: link}, nil
	}
	for range 100 {
		tmp := tempName()
		file, err := d.Open(tmp, fsys.O_RDWR|fsys.O_CREAT|fsys.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Temp{File: file, dir: d, name: tmp}, nil
	}
	return nil, &os.PathError{Op: "create temp file in", Path: d.Path, Err: fsys.EEXIST}
}

// Sync flushes the folder's entries to disk, so a rename survives a crash.
func (d *Dir) Sync() error {
	if err := fsys.Fsync(d.fd); err != nil {
		return &os.PathError{Op: "sync", Path: d.Path, Err: err}
	}
	return nil
}

// Temp is a file being written that will replace a name in its folder.
type Temp struct {
	*os.File
	dir  *Dir
	name string // "" while unnamed (O_TMPFILE)
}

// Commit makes the temp file the folder's entry name, atomically (a
// reader sees the old file or the new one), without syncing the folder
// (docs/design.md's durability rule). A create gets name only while it is
// free (FS_EXISTS otherwise): an unnamed file (O_TMPFILE) is linked in, a
// named one renamed without replacing. An unnamed file that replaces is
// linked in under a hidden name, the target's own (the caller holds its
// lock), and renamed over it, since linkat cannot replace; a process
// killed between the two leaves that one file, which the next
// replacement of name removes first, whatever its kind of temp file.
func (t *Temp) Commit(name string, replace bool) error {
	if err := oneEntry(t.dir.Path, name); err != nil {
		return err
	}
	if !replace {
		if err := t.create(name); err != nil {
			if errors.Is(err, fsys.EEXIST) {
				return fserr.Wrap(fserr.Exists, "create "+joinPath(t.dir.Path, name)+": created by another process meanwhile", err)
			}
			return t.dir.refused(&os.PathError{Op: "link", Path: joinPath(t.dir.Path, name), Err: err})
		}
		return nil
	}
	link := stagingName(name)
	if t.name != link {
		fsys.Unlinkat(t.dir.fd, link, 0) // a leftover of a killed writer, whichever kind of temp file this one is
	}
	if t.name == "" {
		if err := t.link(link); err != nil {
			return t.dir.refused(&os.PathError{Op: "link", Path: joinPath(t.dir.Path, name), Err: err})
		}
		t.name = link
	}
	if err := fsys.Renameat(t.dir.fd, t.name, t.dir.fd, name); err != nil {
		return t.dir.refused(&os.PathError{Op: "rename", Path: joinPath(t.dir.Path, name), Err: err})
	}
	t.name = ""
	return nil
}

// create gives the temp file the name name, failing with EEXIST when
// something has that name by now.
func (t *Temp) create(name string) error {
	if t.name == "" {
		return t.link(name)
	}
	err := renameNoReplace(t.dir.fd, t.name, t.dir.fd, name)
	if err == nil {
		t.name = ""
		return nil
	}
	if errors.Is(err, fsys.EINVAL) || errors.Is(err, fsys.ENOSYS) {
		// No RENAME_NOREPLACE here: a hard link is just as exclusive, and
		// Discard removes the temp name.
		err = fsys.Linkat(t.dir.fd, t.name, t.dir.fd, name, 0)
	}
	return err
}

// stagingName is the hidden name a replacement of name is staged under:
// fixed for a name, so a leftover is found again, and of fixed length, so
// it fits wherever name does.
func stagingName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf(".dsh-fs-%x.tmp", sum[:8])
}

// Discard closes the temp file and removes its name, if it has one. It is
// safe to call after Commit, and more than once.
func (t *Temp) Discard() {
	t.File.Close()
	if t.name != "" {
		fsys.Unlinkat(t.dir.fd, t.name, 0)
		t.name = ""
	}
}

// tempName is a hidden name no user file is likely to have; a crash after
// a named temp file was created leaves it recognizable.
func tempName() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return fmt.Sprintf(".dsh-fs-%x.tmp", b)
}

// Mkdir makes the folder name in the folder, through its handle. A name
// that already is a folder is no error (created is then false); one that
// is anything else, a symlink included, is never followed and is
// FS_EXISTS.
func (d *Dir) Mkdir(name string, perm uint32) (created bool, err error) {
	if err := oneEntry(d.Path, name); err != nil {
		return false, err
	}
	err = fsys.Mkdirat(d.fd, name, perm)
	if err == nil {
		return true, nil
	}
	perr := &os.PathError{Op: "mkdir", Path: joinPath(d.Path, name), Err: err}
	if !errors.Is(err, fsys.EEXIST) {
		return false, d.refused(perr)
	}
	st, serr := d.Lstat(name)
	if serr != nil {
		return false, serr
	}
	if st.Mode&fsys.S_IFMT != fsys.S_IFDIR {
		return false, fserr.New(fserr.Exists, "mkdir: "+perr.Path+": exists and is not a folder")
	}
	return false, nil
}

// rename moves name in the folder d to toName in the folder to, through
// both handles and with RENAME_NOREPLACE: what is at the destination is
// never replaced (FS_EXISTS), and a symlink is moved as a link, never
// followed. Fence.rename is the one caller: it decides first on what
// lies beneath a folder.
func (d *Dir) rename(name string, to *Dir, toName string) error {
	if err := errors.Join(oneEntry(d.Path, name), oneEntry(to.Path, toName)); err != nil {
		return err
	}
	err := renameNoReplace(d.fd, name, to.fd, toName)
	if err == nil {
		return nil
	}
	if errors.Is(err, fsys.EEXIST) {
		return fserr.New(fserr.Exists, "move: "+joinPath(to.Path, toName)+": exists; a move never replaces")
	}
	return d.refused(&os.PathError{Op: "rename", Path: joinPath(d.Path, name), Err: err})
}

// remove removes name from the folder (rmdir when folder is true), never
// following a symlink: a link is removed as a link. Fence.Remove is the
// one caller.
func (d *Dir) remove(name string, folder bool) error {
	if err := oneEntry(d.Path, name); err != nil {
		return err
	}
	flags := 0
	if folder {
		flags = fsys.AT_REMOVEDIR
	}
	if err := fsys.Unlinkat(d.fd, name, flags); err != nil {
		return d.refused(&os.PathError{Op: "remove", Path: joinPath(d.Path, name), Err: err})
	}
	return d.Sync()
}

// LocksRoot reports whether opening the folder of t for a mutation takes
// the lock on its writable root (a part of a git directory at the top of
// the root, see openConfined): a caller that opens two such folders of
// one root at once would wait on itself.
func LocksRoot(t Target) bool {
	first, _, _ := strings.Cut(t.rel, "/")
	return t.root != "" && slices.Contains(pathmatch.GitDirParts, first)
}
