package sandbox

import (
	"errors"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// One call decides and opens (docs/design.md §4): a mutation gets what
// it acts on only from Lock (a file to replace), Mkdir, Remove or Move
// (an entry to make, remove or rename), each of which decides first and
// then opens through the confined walk, which decides again on the path
// as it resolves by then. What a verdict
// decided stays in the Target's unexported fields; no caller can fill
// them in, and the open never trusts them.

// Intent is what a mutation asks of the fence besides its target.
type Intent struct {
	// Mkdir makes the missing folders on the way, one at a time, each
	// through the confined handle of its parent.
	Mkdir bool
	// Preview is what the approver of an escalation is shown of the
	// change; it is called only when a denial goes to an approver
	// (asksApprover). Nil for a call that is never escalated: its denial
	// is final.
	Preview func() (Preview, error)
	// DryRun asks Lock for its verdict and a look at what it would hold
	// (Look): nothing is made, opened for writing or locked.
	DryRun bool
}

// WouldWrite is the verdict Lock, Mkdir, Move or Remove would give a
// mutation of t, without opening anything: a dry run's, and a plan's
// that decides on every target before it locks any. It decides as they
// do (decideWrite), and fills in t's verdict; nothing done with t
// afterwards trusts it, since each of them decides again.
func (f *Fence) WouldWrite(op string, t *Target, in Intent) error {
	return f.decideWrite(op, t, in)
}

// decideWrite is the fence's verdict on a mutation of t: deny_read (the
// result shows the old content, and a path no mode may read is no more
// writable than readable), the write fence, and the escalation the call
// asked for, the approver shown in.Preview. It fills in t's verdict.
func (f *Fence) decideWrite(op string, t *Target, in Intent) error {
	if err := f.CheckRead(op, *t); err != nil {
		return err
	}
	err := f.CheckWrite(op, t)
	if err == nil || in.Preview == nil {
		return err
	}
	var preview Preview
	if f.asksApprover(err) {
		p, perr := in.Preview()
		if perr != nil {
			return perr
		}
		preview = p
	}
	return f.Escalate(err, t, preview)
}

// openForWrite decides on a mutation of t (decideWrite) and opens the
// folder it happens in, returning the folder and t's name in it. The open
// decides again, on the path as it resolves now (openDir). A target that
// is a writable root itself is FS_IS_DIR.
func (f *Fence) openForWrite(op string, t *Target, in Intent) (*Dir, string, error) {
	if err := f.decideWrite(op, t, in); err != nil {
		return nil, "", err
	}
	return f.openDir(op, *t, in.Mkdir)
}

// Move renames src to dst, which must not exist: both are mutations the
// fence decides (taking a file out of a protected path is one, as is
// putting one there), and the rename runs between the two confined folder
// handles (see rename), so a folder swapped for a symlink on either side
// is refused, never followed. A folder carries what lies beneath it. A
// destination beneath src itself is FS_INVALID_ARGUMENT, found before
// the rename: the kernel's EINVAL for it would be an I/O failure
// (fserr), and the bad input is the caller's. in.Preview, when set, is
// what an approver of either end's denial is shown: it names both ends.
// It returns the type bits (S_IFMT) of what it moved.
func (f *Fence) Move(op string, src, dst Target, in Intent) (uint32, error) {
	for _, t := range []*Target{&src, &dst} {
		if err := f.decideWrite(op, t, Intent{Preview: in.Preview}); err != nil {
			return 0, err
		}
	}
	if src.SameRoot(dst) && LocksRoot(src) && LocksRoot(dst) {
		return 0, fserr.New(fserr.InvalidArgument, op+": "+src.Given+" to "+dst.Given+": both are parts of a git directory at the top of a writable root; move them one step at a time")
	}
	to, toName, err := f.openDir(op, dst, false)
	if err != nil {
		return 0, err
	}
	defer to.Close()
	from, fromName, err := f.openDir(op, src, false)
	if err != nil {
		return 0, err
	}
	defer from.Close()
	if dst.Path != src.Path && Beneath(src.Path, dst.Path) {
		return 0, fserr.New(fserr.InvalidArgument, op+": "+src.Given+" to "+dst.Given+": the destination is beneath the source; a folder cannot be moved into itself")
	}
	return f.rename(op, src, dst, from, fromName, to, toName)
}

// Remove removes t through the confined handle of its folder: a file, a
// symlink (the link, never what it names) or an empty folder. A folder
// that holds anything is FS_IS_DIR: nothing is removed recursively, so a
// removal carries nothing from beneath a folder out of its entry's reach
// (docs/design.md §4). in.Preview is as for Lock. It returns the
// type bits (S_IFMT) of what it removed, as the handle saw it.
func (f *Fence) Remove(op string, t Target, in Intent) (uint32, error) {
	d, name, err := f.openForWrite(op, &t, in)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	st, err := d.Lstat(name)
	if err != nil {
		return 0, t.osError(op, err)
	}
	typ := uint32(st.Mode & fsys.S_IFMT)
	if err := d.remove(name, typ == fsys.S_IFDIR); err != nil {
		if errors.Is(err, fsys.ENOTEMPTY) || errors.Is(err, fsys.EEXIST) {
			return 0, fserr.Wrap(fserr.IsDir, op+": "+t.Given+": is a folder that holds something; a removal is never recursive", err)
		}
		return 0, t.osError(op, err)
	}
	return typ, nil
}

// Mkdir makes the folder t through the confined handle of its parent,
// and with in.Mkdir each missing folder above it through the handle of
// the one above that. A folder that already exists is no error (created
// false); anything else there, a symlink included, is FS_EXISTS and
// never followed. in.Preview is as for Lock, and t is canonicalized
// again in place as Lock does, so a caller asks t.IsRoot of what was
// decided on.
func (f *Fence) Mkdir(op string, t *Target, in Intent) (created bool, err error) {
	d, name, err := f.openForWrite(op, t, in)
	if err != nil {
		return false, err
	}
	defer d.Close()
	return d.Mkdir(name, 0o777)
}

// Held is a file a mutation replaces, as the fence holds it (Lock): its
// folder opened through the confined walk, its name there, and, when it
// exists, the file itself, opened, holding an exclusive flock, verified
// to be what the name names, writable by this process and readable under
// deny_read. Whatever replaces it goes through Dir. A look (Look) holds
// the file only for reading: no folder, no name, no lock.
type Held struct {
	// Dir is the folder the file is in; nil for a look.
	Dir *Dir
	// Name is the file's name in Dir; "" for a look.
	Name string
	// File is the locked file, open for reading; nil when the target
	// does not exist.
	File *os.File
	// Stat is File's status when it was locked or looked at.
	Stat fsys.Stat_t
	// target is what the fence decided on and holds.
	target Target
}

// Given is the held target as the caller wrote it, for messages.
func (h *Held) Given() string { return h.target.Given }

// Close releases the lock and the folder.
func (h *Held) Close() {
	if h.File != nil {
		h.File.Close()
	}
	if h.Dir != nil {
		h.Dir.Close()
	}
}

// Exists reports whether the target existed when it was locked or
// looked at.
func (h *Held) Exists() bool { return h.File != nil }

// maxLockRetries bounds how often the lock is taken again because another
// process replaced the file while this one waited. Each retry means
// somebody else made progress, so it is never reached in practice.
const maxLockRetries = 1000

// Lock is the one call that holds a file for a mutation that replaces it
// (write, edit, patch): it decides on t (WouldWrite, an escalation's
// approver shown in.Preview), opens t's folder through the confined walk
// (in.Mkdir making missing folders), and takes an exclusive flock, so
// writers in many processes serialize. Locked, it checks that the name
// still names that file (else it starts over, a bounded number of times),
// that it is a regular file it may write, and that it passes deny_read (a
// hard link to a secret is denied like the secret). A missing target is
// held with a nil File. With in.DryRun it decides as it would, and then
// only looks at what it would hold (Look).
func (f *Fence) Lock(op string, t *Target, in Intent) (*Held, error) {
	if in.DryRun {
		if err := f.decideWrite(op, t, in); err != nil {
			return nil, err
		}
		return f.Look(op, *t, in.Mkdir)
	}
	dir, name, err := f.openForWrite(op, t, in)
	if err != nil {
		return nil, err
	}
	h := &Held{Dir: dir, Name: name, target: *t}
	if err := h.lock(op); err != nil {
		dir.Close()
		return nil, err
	}
	if h.File == nil {
		return h, nil
	}
	if err := f.CheckReadOpened(op, *t, h.File); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// lock opens and locks the file h names, if it exists (see Lock).
func (h *Held) lock(op string) error {
	given := h.target.Given
	for range maxLockRetries {
		// O_NONBLOCK: opening a FIFO must not hang; it is refused below.
		file, err := h.Dir.Open(h.Name, fsys.O_RDONLY|fsys.O_NONBLOCK, 0)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return h.target.osError(op, err)
		}
		held, err := flockFile(file)
		if err != nil {
			file.Close()
			return h.target.osError(op, err)
		}
		now, err := h.Dir.Lstat(h.Name)
		if err != nil || now.Dev != held.Dev || now.Ino != held.Ino {
			file.Close() // replaced while we waited: take the new one
			continue
		}
		switch held.Mode & fsys.S_IFMT {
		case fsys.S_IFREG:
			if err := h.target.CheckWritable(op, file, func() error { return h.Dir.Access(h.Name, fsys.W_OK) }); err != nil {
				file.Close()
				return err
			}
			h.File, h.Stat = file, held
			return nil
		case fsys.S_IFDIR:
			file.Close()
			return fserr.New(fserr.IsDir, op+": "+given+": is a folder")
		}
		file.Close()
		return fserr.New(fserr.InvalidArgument, op+": "+given+": not a regular file")
	}
	return fserr.New(fserr.IO, op+": "+given+": the file kept changing while waiting for its lock")
}

// Look is what a mutation of t would replace, held for a dry run or for
// the preview an approver is shown, whatever the write fence says of t:
// the file opened for reading only, as OpenCurrent opens it (deny_read
// decides on what it opened), refused unless it is a regular file this
// process may write (CheckWritable). A missing file is held with a nil
// File once its folder exists, or, with mkdir, once its nearest existing
// ancestor is a folder. It makes nothing and locks nothing: the Held has
// no Dir.
func (f *Fence) Look(op string, t Target, mkdir bool) (*Held, error) {
	h := &Held{target: t}
	file, err := f.OpenCurrent(op, t)
	if fserr.CodeOf(err) == fserr.NotFound {
		if err := checkParent(op, t, mkdir); err != nil {
			return nil, err
		}
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.look(op, file, t.Path); err != nil {
		file.Close()
		return nil, err
	}
	return h, nil
}

// look holds file, opened for a look at the target at path, if it is a
// regular file this process may write (see Look).
func (h *Held) look(op string, file *os.File, path string) error {
	if err := fsys.Fstat(int(file.Fd()), &h.Stat); err != nil {
		return h.target.osError(op, os.NewSyscallError("fstat", err))
	}
	switch h.Stat.Mode & fsys.S_IFMT {
	case fsys.S_IFREG:
	case fsys.S_IFDIR:
		e := fserr.New(fserr.IsDir, op+": "+h.target.Given+": is a folder")
		e.Hint = "use ls to list a folder"
		return e
	default:
		return fserr.New(fserr.InvalidArgument, op+": "+h.target.Given+": not a regular file")
	}
	if err := h.target.CheckWritable(op, file, func() error { return fsys.Faccessat(fsys.AT_FDCWD, path, fsys.W_OK, fsys.AT_EACCESS) }); err != nil {
		return err
	}
	h.File = file
	return nil
}

// checkParent checks that the folder of t exists, or, with mkdir, that
// the nearest existing ancestor is a folder, without making anything.
func checkParent(op string, t Target, mkdir bool) error {
	for dir := range ancestors(dirOf(t.Path)) {
		fi, err := os.Stat(fsys.ToOS(dir))
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return fserr.New(fserr.NotDir, op+": "+t.Given+": "+dir+" is not a folder")
		case !errors.Is(err, os.ErrNotExist):
			return t.osError(op, err)
		case !mkdir:
			e := fserr.New(fserr.NotFound, op+": "+t.Given+": folder "+dir+" does not exist")
			e.Hint = "add --mkdir to create missing folders"
			return e
		}
	}
	return fserr.New(fserr.NotFound, op+": "+t.Given+": no folder above it exists")
}

// flockFile takes an exclusive flock on file and returns its status.
func flockFile(file *os.File) (fsys.Stat_t, error) {
	var st fsys.Stat_t
	if err := fsys.Flock(int(file.Fd()), fsys.LOCK_EX); err != nil {
		return st, os.NewSyscallError("flock", err)
	}
	if err := fsys.Fstat(int(file.Fd()), &st); err != nil {
		return st, os.NewSyscallError("fstat", err)
	}
	return st, nil
}

// CheckWrite decides whether t may be mutated under the effective mode, and
// on success in workspace-write mode fills in t.root and t.rel for the
// confined handle. A denial is a *DeniedError; an escalation asked for
// in this call is Escalate's to decide, with a preview of the change.
func (f *Fence) CheckWrite(op string, t *Target) error {
	reason, matched, needed := f.writeVerdict(t)
	if reason == "" {
		return f.checkApproved(op, *t)
	}
	return f.denial(op, *t, reason, matched, needed)
}

// Verdict is the fence's answer on a mutation of a path, for a caller
// that explains it (stat): Reason is "" when it would pass, or one of the
// Reason constants, with what it matched and the narrowest mode that
// would allow it.
type Verdict struct {
	Reason  string
	Matched string
	Needed  policy.Mode
}

// WriteVerdict decides on a mutation of t by name, as CheckWrite does,
// without a denial and without escalating.
func (f *Fence) WriteVerdict(t Target) Verdict {
	reason, matched, needed := f.writeVerdict(&t)
	return Verdict{Reason: reason, Matched: matched, Needed: needed}
}

// writeVerdict returns "" when t may be mutated in the effective mode, or
// the reason it may not, what it matched, and the narrowest mode that would
// allow it.
func (f *Fence) writeVerdict(t *Target) (reason, matched string, needed policy.Mode) {
	switch f.mode {
	case policy.DangerFullAccess:
		return "", "", ""
	case policy.ReadOnly:
		if r, _, _ := f.workspaceVerdict(&Target{Given: t.Given, Path: t.Path}); r == "" {
			return policy.ReasonReadOnly, "", policy.WorkspaceWrite
		}
		return policy.ReasonReadOnly, "", policy.DangerFullAccess
	}
	return f.workspaceVerdict(t)
}

func (f *Fence) workspaceVerdict(t *Target) (reason, matched string, needed policy.Mode) {
	roots, err := f.Roots()
	if err != nil {
		return policy.ReasonOutsideRoots, "", policy.DangerFullAccess
	}
	written := f.asWritten(t.Given)
	var root, rel string
	for i, r := range roots {
		r := r.Path
		inRel, ok := pathmatch.Within(r, t.Path)
		if !ok {
			inRel, ok = f.identityWithin(i, t.Path)
		}
		if !ok {
			continue
		}
		if g, hit := f.protectedIn(inRel, t.Path); hit {
			return policy.ReasonProtected, g, policy.DangerFullAccess
		}
		// The path as written may name a protected folder through a
		// symlink (.vscode => editor): that spelling is protected too.
		if wRel, ok := pathmatch.Within(r, written); ok {
			if g, hit := f.protectedIn(wRel, written); hit {
				return policy.ReasonProtected, g, policy.DangerFullAccess
			}
			if dotgit, hit := pathmatch.GitProtectedByName(wRel); hit && wRel != "." {
				return policy.ReasonProtected, joinPath(r, dotgit), policy.DangerFullAccess
			}
		}
		if dir, hit := pathmatch.GitProtectedIn(inRel, t.Path, f.gitPointed); hit {
			return policy.ReasonProtected, dir, policy.DangerFullAccess
		}
		if pathmatch.CompletesGitDir(r, inRel) {
			return policy.ReasonBareRepo, "", policy.DangerFullAccess
		}
		// The innermost root confines the handle most tightly; roots
		// nest rarely, so keep the longest match.
		if root == "" || len(r) > len(root) {
			root, rel = r, inRel
		}
	}
	if root == "" {
		// Beneath a session cwd the trusted policy refused as a
		// workspace, say so: "outside writable roots" would leave the
		// model guessing why its own folder is not writable.
		for _, r := range f.refused {
			if _, ok := pathmatch.Within(r.Path, t.Path); ok && r.Origin == "cwd" {
				return r.Reason, r.Matched, policy.DangerFullAccess
			}
		}
		return policy.ReasonOutsideRoots, "", policy.DangerFullAccess
	}
	t.root, t.rel = root, rel
	return "", "", ""
}

// asWritten is the path as the caller wrote it, made absolute against the
// session cwd and cleaned lexically: not where it leads, but how it is
// spelled, for the checks that must hold for both.
func (f *Fence) asWritten(given string) string {
	if !isAbs(given) {
		given = joinPath(f.policy.Base(), given)
	}
	return cleanPath(given)
}

// identityWithin is the identity fallback of docs/design.md §4 step 4. It runs
// only when the lexical test failed, so the common denial pays for it and
// the common success does not.
func (f *Fence) identityWithin(i int, target string) (string, bool) {
	if f.rootInfos == nil {
		f.rootInfos = make([]os.FileInfo, len(f.roots))
		for j, r := range f.roots {
			f.rootInfos[j], _ = os.Stat(fsys.ToOS(r.Path))
		}
	}
	if f.rootInfos[i] == nil {
		return "", false
	}
	return sameFileAncestor(f.rootInfos[i], target)
}

// protectedIn reports the protected glob or path that rel (inside its
// root) or the absolute path falls under.
//
// A glob names a path relative to the root, or, when it starts with "/"
// or "~" (the user database's home), an absolute one. A glob that names a
// folder covers everything beneath it, as in gitignore: "secrets" protects
// "secrets/key" as "secrets/**" does.
func (f *Fence) protectedIn(rel, canonical string) (string, bool) {
	for _, g := range f.policy.Protected {
		name, pattern := rel, f.policy.ExpandHome(g)
		if strings.HasPrefix(pattern, "/") {
			name = canonical
		} else if rel == "." {
			continue
		}
		if pathmatch.Covers(pathmatch.Folded(pattern), pathmatch.Folded(name)) {
			return g, true
		}
	}
	for _, p := range f.absProtected {
		if _, ok := pathmatch.Within(pathmatch.Folded(p), pathmatch.Folded(canonical)); ok {
			return p, true
		}
	}
	return "", false
}
