package fsops

import (
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Move renames the file or folder src to dst, which must not exist: it
// never replaces. Both are mutations the fence decides (taking a file out
// of a protected path is one, as is putting one there), neither may be
// under deny_read, and the rename runs between the two confined folder
// handles, so a folder swapped for a symlink on either side is refused,
// never followed. A symlink is moved as a link. A folder carries what lies
// beneath it: the fence refuses one whose contents a deny_read or
// protected entry would no longer cover where it lands, or newly cover
// (sandbox.Fence.Move).
func Move(f *sandbox.Fence, src, dst sandbox.Target) error {
	return f.Move("move", src, dst)
}
