package fsops

import (
	"errors"
	"io/fs"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// StatResult describes a path. A path that does not exist is a result with
// Exists false, not an error, so a caller can ask before it writes.
type StatResult struct {
	Exists bool `json:"exists"`
	Info
	// Writable says whether a mutation of the path would pass the current
	// policy; WritableReason says why not.
	Writable       bool   `json:"writable"`
	WritableReason string `json:"writable_reason,omitempty"`
	// Shell says, where a write is refused, what it meets in the model's
	// shell (the layer and the rule), and WayForward what lifts it. The
	// CLI fills them in from the session's record; Stat leaves them.
	Shell      string `json:"shell,omitempty"`
	WayForward string `json:"way_forward,omitempty"`
	// Verdict is the fence's whole answer behind Writable, for a front
	// end that explains a refusal.
	Verdict sandbox.Verdict `json:"-"`
}

// Stat describes t without following a final symlink, and judges whether a
// mutation of it would pass the fence. A path under deny_read is denied,
// and so is what the path leads to when it is looked at (the fence looks
// at it through a handle and checks that).
func Stat(f *sandbox.Fence, t sandbox.Target) (*StatResult, error) {
	st, err := f.Lstat("stat", t)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	res := &StatResult{}
	res.Verdict = f.WriteVerdict(t)
	res.Writable, res.WritableReason = res.Verdict.Reason == "", res.Verdict.Reason
	if err == nil {
		res.Exists = true
		res.Info = describe(&st)
	}
	return res, nil
}
