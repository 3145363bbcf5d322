package sandbox

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// One call decides and opens (docs/design.md §4): a mutation gets the
// folder it happens in only from OpenForWrite (or Move, for a rename's
// two), which decides first and then opens through the confined walk,
// which decides again on the path as it resolves by then. What a verdict
// decided stays in the Target's unexported fields; no caller can fill
// them in, and the open never trusts them.

// Intent is what a mutation asks of the fence besides its target.
type Intent struct {
	// Mkdir makes the missing folders on the way, one at a time, each
	// through the confined handle of its parent.
	Mkdir bool
	// Preview is what the approver of an escalation is shown of the
	// change; it is called only when a denial goes to an approver
	// (AsksApprover). Nil for a call that is never escalated: its denial
	// is final.
	Preview func() (Preview, error)
}

// DecideWrite is the fence's verdict on a mutation of t: deny_read (the
// result shows the old content, and a path no mode may read is no more
// writable than readable), the write fence, and the escalation the call
// asked for, the approver shown in.Preview. It fills in t's verdict. A dry
// run stops here; OpenForWrite goes on to open.
func (f *Fence) DecideWrite(op string, t *Target, in Intent) error {
	if err := f.CheckRead(op, *t); err != nil {
		return err
	}
	err := f.CheckWrite(op, t)
	if err == nil || in.Preview == nil {
		return err
	}
	var preview Preview
	if f.AsksApprover(err) {
		p, perr := in.Preview()
		if perr != nil {
			return perr
		}
		preview = p
	}
	return f.Escalate(err, t, preview)
}

// OpenForWrite decides on a mutation of t (DecideWrite) and opens the
// folder it happens in, returning the folder and t's name in it. The open
// decides again, on the path as it resolves now (openDir). A target that
// is a writable root itself is FS_IS_DIR.
func (f *Fence) OpenForWrite(op string, t *Target, in Intent) (*Dir, string, error) {
	if err := f.DecideWrite(op, t, in); err != nil {
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
		if err := f.DecideWrite(op, t, Intent{Preview: in.Preview}); err != nil {
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
// (docs/design.md §4). in.Preview is as for OpenForWrite. It returns the
// type bits (S_IFMT) of what it removed, as the handle saw it.
func (f *Fence) Remove(op string, t Target, in Intent) (uint32, error) {
	d, name, err := f.OpenForWrite(op, &t, in)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	st, err := d.Lstat(name)
	if err != nil {
		return 0, fserr.FromOS(op, t.Given, err)
	}
	typ := st.Mode & unix.S_IFMT
	if err := d.remove(name, typ == unix.S_IFDIR); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return 0, fserr.Wrap(fserr.IsDir, op+": "+t.Given+": is a folder that holds something; a removal is never recursive", err)
		}
		return 0, fserr.FromOS(op, t.Given, err)
	}
	return typ, nil
}
