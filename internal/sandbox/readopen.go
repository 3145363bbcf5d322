package sandbox

import (
	"os"
	"sync/atomic"

	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// Reads decide on what they opened (docs/design.md §9): a path is opened
// first, one component at a time by handle, and the object opened is then
// checked against deny_read by its own path, its identity and its type;
// only then is it read, through the same descriptor. A name checked
// before the open is a race by construction: a symlink swapped in between
// the two would be followed to whatever it names.

// Stat is what the fence saw of an object it looked at for a read: its
// status, not following a final symlink, and what a symlink points to,
// as stored in the link.
type Stat struct {
	fsys.Stat_t
	// Target is a symlink's content; "" for anything else.
	Target string
}

// IsDir reports whether the object is a folder (never a symlink to one).
func (s *Stat) IsDir() bool { return s.Mode&fsys.S_IFMT == fsys.S_IFDIR }

// IsRegular reports whether the object is a regular file.
func (s *Stat) IsRegular() bool { return s.Mode&fsys.S_IFMT == fsys.S_IFREG }

// OpenRead opens t for reading, following symlinks, and decides on what
// it opened: t as written and as resolved must pass deny_read, and so
// must the opened file's own path (the folders walked to reach it, and
// what /proc/self/fd says of it) and its identity (a file with several
// links may be a secret's hard link). A symlink swapped in after
// Resolve is followed by this walk, and what it leads to is checked as
// anything else. The file may be of any type, opened without blocking
// (a FIFO with no writer, a device): the caller decides what it reads.
// It never follows a /proc magic link in the kernel: the text of every
// symlink is resolved here.
func (f *Fence) OpenRead(op string, t Target) (*os.File, error) {
	return f.openRead(op, t, true)
}

// OpenCurrent is OpenRead for the current content of a mutation's target,
// the basis of its diff and of the preview an approver sees. deny_read
// decides on it as on any read; the read confinement of dsh-fs mcp does
// not, since whether the call may touch the file is the write fence's to
// decide (CheckWrite, Escalate), and a denied change shows the model no
// content.
func (f *Fence) OpenCurrent(op string, t Target) (*os.File, error) {
	return f.openRead(op, t, false)
}

// openRead is OpenRead, or OpenCurrent where confined is false.
func (f *Fence) openRead(op string, t Target, confined bool) (*os.File, error) {
	checkName, checkOpened := f.CheckRead, func(w walked) error { return f.checkReadOpened(op, t, w.fd, w.path, &w.st) }
	if confined {
		checkName, checkOpened = f.checkReadTarget, func(w walked) error { return f.checkReadWalked(op, t, w) }
	}
	if err := checkName(op, t); err != nil {
		return nil, err
	}
	w, err := walkPath(f.givenAbs(t), walkSpec{flags: fsys.O_RDONLY | fsys.O_NONBLOCK | fsys.O_NOCTTY, followLast: true})
	if err != nil {
		return nil, t.osError(op, err)
	}
	if err := checkOpened(w); err != nil {
		fsys.Close(w.fd)
		return nil, err
	}
	return os.NewFile(uintptr(w.fd), w.path), nil
}

// Lstat describes t without following a final symlink (the folders on
// the way are followed), after the same checks as OpenRead on what it
// looked at: the object is opened as a handle (O_PATH), never for
// reading, and described through it. A path that does not exist is an
// error that errors.Is(err, fs.ErrNotExist) recognizes, once t has
// passed deny_read by name.
func (f *Fence) Lstat(op string, t Target) (Stat, error) {
	if err := f.checkReadTarget(op, t); err != nil {
		return Stat{}, err
	}
	w, err := walkPath(f.givenAbs(t), walkSpec{flags: oPath})
	if err != nil {
		return Stat{}, t.osError(op, err)
	}
	defer fsys.Close(w.fd)
	if err := f.checkReadWalked(op, t, w); err != nil {
		return Stat{}, err
	}
	st := Stat{Stat_t: w.st}
	if w.st.Mode&fsys.S_IFMT == fsys.S_IFLNK {
		st.Target, _ = linkText(w.fd)
	}
	return st, nil
}

// CheckReadOpened decides on a file opened by other means for a read of t
// (the target of a write or an edit, whose old content the result shows,
// opened through the confined folder at t.Path): its path and its
// identity must pass deny_read, as for OpenRead.
func (f *Fence) CheckReadOpened(op string, t Target, file *os.File) error {
	var st fsys.Stat_t
	if err := fsys.Fstat(int(file.Fd()), &st); err != nil {
		return t.osError(op, os.NewSyscallError("fstat", err))
	}
	return f.checkReadOpened(op, t, int(file.Fd()), t.Path, &st)
}

// checkReadOpened is the decision on an opened object: walked is the path it
// was reached by, one handle at a time. If /proc/self/fd names it
// otherwise (a folder on the way was renamed meanwhile), that path must
// pass too. A regular file with several links must not be a file beneath
// an anchored deny_read glob (see deniedIdentity).
func (f *Fence) checkReadOpened(op string, t Target, fd int, walked string, st *fsys.Stat_t) error {
	if len(f.denyRead) == 0 {
		return nil
	}
	if g, ok := f.deniedRead(Target{Given: walked, Path: walked}); ok {
		return f.readDenied(op, t, g)
	}
	if p, ok := fdPath(fd); ok && p != walked {
		if g, ok := f.deniedRead(Target{Given: p, Path: p}); ok {
			return f.readDenied(op, t, g)
		}
	}
	if g, ok := f.deniedIdentity(st); ok {
		return f.readDenied(op, t, g)
	}
	return nil
}

// checkReadTarget decides, by name, on t for a read operation (a read,
// listing or stat): deny_read, and the read confinement of dsh-fs mcp.
// A write's or an edit's target is decided by CheckRead alone: what it
// may mutate is the write fence's to say, and its old content comes with
// it.
func (f *Fence) checkReadTarget(op string, t Target) error {
	if err := f.CheckRead(op, t); err != nil {
		return err
	}
	if f.readOutside(t.Path) {
		return f.denial(op, t, policy.ReasonOutsideAllowed, t.Path, "")
	}
	return nil
}

// checkReadWalked is checkReadTarget's decision on what the walk opened:
// the path it took and the path /proc/self/fd gives for it now must lie
// within the allowed folders, and the object must pass deny_read.
func (f *Fence) checkReadWalked(op string, t Target, w walked) error {
	if f.policy.ReadWithin != nil {
		if f.readOutside(w.path) {
			return f.denial(op, t, policy.ReasonOutsideAllowed, w.path, "")
		}
		if p, ok := fdPath(w.fd); ok && p != w.path && f.readOutside(p) {
			return f.denial(op, t, policy.ReasonOutsideAllowed, p, "")
		}
	}
	return f.checkReadOpened(op, t, w.fd, w.path, &w.st)
}

// readOutside reports whether the canonical path lies outside what
// Policy.ReadWithin lets a read reach: its folders and, in
// workspace-write mode, the writable roots. Without ReadWithin nothing
// is outside.
func (f *Fence) readOutside(path string) bool {
	if f.policy.ReadWithin == nil {
		return false
	}
	inside := func(roots []string) bool {
		for _, r := range roots {
			if _, ok := pathmatch.Within(r, path); ok {
				return true
			}
		}
		return false
	}
	if inside(f.policy.ReadWithin) {
		return false
	}
	return f.mode != policy.WorkspaceWrite || !inside(f.rootPaths())
}

// readDenied is the deny_read denial of t, matched by g.
//
// It lists no writable roots: no write and no root changes what a read of
// a secret may do, and a list of them reads as a way forward.
func (f *Fence) readDenied(op string, t Target, g string) error {
	d := f.denial(op, t, policy.ReasonDenyRead, g, "")
	d.WritableRoots = nil
	return d
}

// givenAbs is t as the caller wrote it, made absolute against the session
// cwd but not cleaned: the walk resolves "link/.." as the kernel does.
func (f *Fence) givenAbs(t Target) string {
	if isAbs(t.Given) {
		return t.Given
	}
	return f.policy.Base() + "/" + t.Given
}

// fdPath is what the verified /proc says of fd (openedPath): its path
// now, or false where /proc is missing or not verified, the path is too
// long for it, or the object has no
// path (a pipe, a socket). A deleted file keeps the path it had.
func fdPath(fd int) (string, bool) {
	p, err := openedPath(fd)
	return p, err == nil
}

// readBacks counts this package's read-backs of descriptors: where a
// decision needed one (TestListDirReadsBackWhereARuleCouldApply).
var readBacks atomic.Int64

// OpenedPath is the path of the object open as fd now, read back from
// the system (the verified /proc on Linux, fcntl(F_GETPATH) on macOS),
// never from a name given before the open. It fails where the object has
// no path or the system cannot say.
func OpenedPath(fd int) (string, error) { return openedPath(fd) }

// openedPath is the path of fd now, read back (readBack: the verified
// /proc on Linux, fcntl(F_GETPATH) on macOS).
func openedPath(fd int) (string, error) {
	readBacks.Add(1)
	return readBack(fd)
}

// CheckRead denies reading t when it matches a deny_read glob, in every
// mode. Both the canonical path and the path as written (made absolute,
// cleaned) are tested, so neither a symlink into a secret folder nor a
// symlinked secret folder reads what the list forbids. It decides on
// names only, before anything is opened: a read then opens through
// OpenRead, Lstat or OpenList, which check what they opened.
func (f *Fence) CheckRead(op string, t Target) error {
	if g, ok := f.deniedRead(t); ok {
		return f.readDenied(op, t, g)
	}
	return nil
}

// ReadDenied reports whether the canonical path is under a deny_read glob
// (or is a folder such a glob names, or lies beneath one).
// ls uses it to leave such entries out of a listing.
func (f *Fence) ReadDenied(canonical string) bool {
	_, ok := f.deniedRead(Target{Given: canonical, Path: canonical})
	return ok
}

// deniedRead returns the glob that denies reading t, by name: a glob that
// matches t's canonical path or its path as written, or a folder above
// either (a folder entry covers everything beneath it).
func (f *Fence) deniedRead(t Target) (string, bool) {
	if len(f.denyRead) == 0 {
		return "", false
	}
	lexical := t.Given
	if !isAbs(lexical) {
		lexical = joinPath(f.policy.Base(), lexical)
	}
	lexical = cleanPath(lexical)
	m := f.DenyMatcher()
	i := m.First(t.Path)
	if lexical != t.Path {
		if j := m.First(lexical); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	if i < 0 {
		return "", false
	}
	return f.denyRead[i].shown, true
}
