package fsops

import (
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// MoveResult is the result of a move: where it went, and what it was.
type MoveResult struct {
	Destination         string `json:"destination"`
	DestinationResolved string `json:"destination_resolved"`
	// Type is what was moved: file, dir, symlink or other.
	Type   string `json:"type"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Move renames the file or folder src to dst, which must not exist (it
// never replaces). The fence decides both ends as mutations, neither may
// be under deny_read, and the rename runs between the two confined folder
// handles, so a folder swapped for a symlink is refused, never followed.
// A symlink is moved as a link; one at either end is decided on where it
// leads too. A folder carries what lies beneath it (sandbox.Fence.Move).
// A dry run decides both ends, checks src exists and dst does not, and
// moves nothing.
func Move(f *sandbox.Fence, src, dst sandbox.Target, dryRun bool) (*MoveResult, error) {
	in := sandbox.Intent{Preview: func() (sandbox.Preview, error) {
		return sandbox.Preview{Paths: []policy.EscalationPath{
			sandbox.PathOf(policy.PathMoveFrom, src), sandbox.PathOf(policy.PathMoveTo, dst)}}, nil
	}}
	for _, t := range []sandbox.Target{src, dst} {
		if err := decideFollowed(f, "move", t); err != nil {
			return nil, err
		}
	}
	res := &MoveResult{Destination: dst.Given, DestinationResolved: dst.Path, DryRun: dryRun}
	if !dryRun {
		typ, err := f.Move("move", src, dst, in)
		if err != nil {
			return nil, err
		}
		res.Type = typeOf(fileMode(typ))
		return res, nil
	}
	for _, t := range []*sandbox.Target{&src, &dst} {
		if err := f.WouldWrite("move", t, in); err != nil {
			return nil, err
		}
	}
	st, err := f.Lstat("move", src)
	if err != nil {
		return nil, err
	}
	if _, err := f.Lstat("move", dst); err == nil {
		return nil, fserr.New(fserr.Exists, "move: "+dst.Given+": exists; a move never replaces")
	}
	if err := parentFolder(f, "move", dst); err != nil {
		return nil, err
	}
	res.Type = typeOf(fileMode(uint32(st.Mode)))
	return res, nil
}
