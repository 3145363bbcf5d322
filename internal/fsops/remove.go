package fsops

import (
	"errors"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// RemoveResult is the result of a removal: what was removed.
type RemoveResult struct {
	// Type is file, dir, symlink or other.
	Type   string `json:"type"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Remove removes t, resolved by name (sandbox.Fence.ResolveName): a
// file, a symlink (the link, never what it names) or an empty folder,
// through the confined handle of its folder. A folder that holds
// anything is FS_IS_DIR and nothing is removed: never recursive. It is a
// mutation the fence decides; an escalation shows its approver the path.
// A symlink is decided on where it leads too (decideFollowed). A dry run
// decides, checks that t exists and that a folder is empty, and removes
// nothing.
func Remove(f *sandbox.Fence, t sandbox.Target, dryRun bool) (*RemoveResult, error) {
	in := sandbox.Intent{Preview: func() (sandbox.Preview, error) {
		return sandbox.Preview{Paths: []policy.EscalationPath{sandbox.PathOf(policy.PathDelete, t)}}, nil
	}}
	if err := decideFollowed(f, "rm", t); err != nil {
		return nil, err
	}
	if !dryRun {
		typ, err := f.Remove("rm", t, in)
		if err != nil {
			return nil, err
		}
		return &RemoveResult{Type: typeOf(fileMode(typ))}, nil
	}
	if err := f.WouldWrite("rm", &t, in); err != nil {
		return nil, err
	}
	st, err := f.Lstat("rm", t)
	if err != nil {
		return nil, err
	}
	m := fileMode(uint32(st.Mode))
	if m.IsDir() {
		l, err := List(f, t, ListOptions{All: true, Limit: 1})
		if err != nil {
			return nil, err
		}
		if l.Total > 0 || l.Hidden > 0 {
			return nil, fserr.New(fserr.IsDir, "rm: "+t.Given+": is a folder that holds something; a removal is never recursive")
		}
	}
	return &RemoveResult{Type: typeOf(m), DryRun: true}, nil
}

// decideFollowed decides, for t resolved by name whose last name is a
// symlink, a mutation of where the link leads too, as the official MCP
// server resolves every path it is given and as patch decides a removal
// or a move: a link that leads where the fence would refuse a change is
// refused, though only the link would change. That denial is final: no
// escalation is put to an approver for a path the call does not change.
func decideFollowed(f *sandbox.Fence, op string, t sandbox.Target) error {
	ft, err := f.Resolve(t.Given)
	if err != nil || ft.Path == t.Path {
		return nil
	}
	err = f.WouldWrite(op, &ft, sandbox.Intent{})
	var de *policy.DeniedError
	if errors.As(err, &de) && de.Reason != policy.ReasonDenyRead {
		de.Final = "no escalation lifts this: " + t.Given + " is a symlink to " + ft.Path +
			", and a link is changed only where a change where it leads would be allowed"
	}
	return err
}
