package sandbox

import (
	"fmt"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// PathOf is the EscalationPath of op on t.
func PathOf(op string, t Target) policy.EscalationPath {
	return policy.EscalationPath{Op: op, Path: t.Given, Resolved: t.Path}
}

// requestPaths is what req names: the preview's paths, or, for a change
// of one path whose preview names none, t itself.
func requestPaths(op string, t *Target, preview Preview) []policy.EscalationPath {
	if len(preview.Paths) > 0 {
		return preview.Paths
	}
	return []policy.EscalationPath{PathOf(op, *t)}
}

// recordApproved records what an approver approved: from then on, this call
// may change only the canonical paths req names. An escalation nobody
// was shown (approval trust) records nothing.
func (f *Fence) recordApproved(req policy.EscalationRequest) {
	if f.policy.Approval == policy.ApprovalTrust {
		return
	}
	f.approved = map[string]bool{}
	for _, p := range req.Paths {
		f.approved[p.Resolved] = true
		if p.Op != policy.PathCreate && p.Op != policy.PathMoveTo {
			continue
		}
		// The folders a creation makes on its way are its own: the
		// call may remove them again, empty, when it fails.
		for dir := range ancestors(dirOf(p.Resolved)) {
			if dir != "/" && dir != "." {
				f.approved[dir] = true
			}
		}
	}
}

// checkApproved refuses, once an approver approved a list of paths, a
// change of t that the list does not name: a path the call resolves
// otherwise than the approver was shown, or one it never showed. It is
// FS_STALE: what the approver saw is no longer what would run.
func (f *Fence) checkApproved(op string, t Target) error {
	if !f.escalated || f.approved == nil || f.approved[t.Path] {
		return nil
	}
	return fserr.New(fserr.Stale, fmt.Sprintf("%s: %s: resolves to %s, which the approved escalation did not name; nothing was written", op, t.Given, t.Path))
}
