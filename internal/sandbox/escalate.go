package sandbox

import (
	"fmt"
	"path/filepath"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// What an EscalationRequest asks about (its Kind).
const (
	KindFile        = "file"
	KindNetworkHost = "network_host"
)

// What an escalation does to each path it names (EscalationPath.Op).
const (
	PathCreate   = "create"
	PathUpdate   = "update"
	PathDelete   = "delete"
	PathMoveFrom = "move_from"
	PathMoveTo   = "move_to"
)

// EscalationPath is one path an escalated call changes: what it does
// there, the path as the call gave it, and the path canonical, as the
// call will open it. An escalation names every path it changes, the ones
// the mode already allowed included; the call then changes exactly
// those (Fence.checkApproved).
type EscalationPath struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
}

// EscalationContext is where an escalated call came from, for the
// approver: the dsh-fs exec session (its id, from the session's record),
// the caller's working directory, the calling command line where the
// session's broker read it from the calling process, and the model's own
// reason (--reason). The command line and the reason are the session's
// words, never a verdict: a prompt shows them escaped and says so.
type EscalationContext struct {
	Session     string   `json:"session,omitempty"`
	Cwd         string   `json:"cwd,omitempty"`
	Caller      []string `json:"caller,omitempty"`
	ModelReason string   `json:"model_reason,omitempty"`
}

// MaxModelReason bounds --reason, in bytes.
const MaxModelReason = 1000

// PathOf is the EscalationPath of op on t.
func PathOf(op string, t Target) EscalationPath {
	return EscalationPath{Op: op, Path: t.Given, Resolved: t.Path}
}

// requestPaths is what req names: the preview's paths, or, for a change
// of one path whose preview names none, t itself.
func requestPaths(op string, t *Target, preview Preview) []EscalationPath {
	if len(preview.Paths) > 0 {
		return preview.Paths
	}
	return []EscalationPath{PathOf(op, *t)}
}

// recordApproved records what an approver approved: from then on, this call
// may change only the canonical paths req names. An escalation nobody
// was shown (approval trust) records nothing.
func (f *Fence) recordApproved(req EscalationRequest) {
	if f.policy.Approval == ApprovalTrust {
		return
	}
	f.approved = map[string]bool{}
	for _, p := range req.Paths {
		f.approved[p.Resolved] = true
		if p.Op != PathCreate && p.Op != PathMoveTo {
			continue
		}
		// The folders a creation makes on its way are its own: the
		// call may remove them again, empty, when it fails.
		for dir := filepath.Dir(p.Resolved); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			f.approved[dir] = true
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
