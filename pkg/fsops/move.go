package fsops

import (
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// Move renames the file or folder src to dst, which must not exist: it
// never replaces. Both are mutations the fence decides (taking a file out
// of a protected path is one, as is putting one there), neither may be
// under deny_read, and the rename runs between the two confined folder
// handles, so a folder swapped for a symlink on either side is refused,
// never followed. A symlink is moved as a link. A folder carries what lies
// beneath it: the fence refuses one whose contents a deny_read or
// protected entry would no longer cover where it lands, or newly cover
// (sandbox.Fence.Rename).
func Move(f *sandbox.Fence, src, dst sandbox.Target) error {
	for _, t := range []sandbox.Target{src, dst} {
		if err := f.CheckRead("move", t); err != nil {
			return err
		}
	}
	if err := f.CheckWrite("move", &src); err != nil {
		return err
	}
	if err := f.CheckWrite("move", &dst); err != nil {
		return err
	}
	if src.SameRoot(dst) && sandbox.LocksRoot(src) && sandbox.LocksRoot(dst) {
		return fserr.New(fserr.InvalidArgument, "move: "+src.Given+" to "+dst.Given+": both are parts of a git directory at the top of a writable root; move them one step at a time")
	}
	to, toName, err := f.OpenDir("move", dst, false)
	if err != nil {
		return err
	}
	defer to.Close()
	from, fromName, err := f.OpenDir("move", src, false)
	if err != nil {
		return err
	}
	defer from.Close()
	return f.Rename("move", src, dst, from, fromName, to, toName)
}
