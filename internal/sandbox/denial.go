package sandbox

import (
	"errors"
	"fmt"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// The denial and its escalation: what a refused call tells the model, and
// how an approver is asked to lift it.

// denial is the denial of op on t under the fence's mode, with the
// narrowest mode that would allow it ("" when none would) and what the
// model needs to recover: the writable roots and how to escalate.
func (f *Fence) denial(op string, t Target, reason, matched string, needed policy.Mode) *policy.DeniedError {
	roots, _ := f.Roots()
	d := &policy.DeniedError{Op: op, Path: t.Given, Resolved: t.Path, Base: f.policy.Base(), Mode: f.mode, Reason: reason, Matched: matched,
		WritableRoots: RootPaths(roots), Needed: needed, MaxMode: f.policy.MaxMode, Approval: f.policy.Approval}
	for _, r := range roots {
		if r.Origin == "cwd" {
			d.Workspace = r.Path
			break
		}
	}
	return d
}

// Preview is what an approver is shown of a denied change: the bounded
// diff, as a result's "diff" object and as text.
type Preview struct {
	Diff any
	Text string
	// Paths are every path the change touches; none for a change of the
	// denied target alone.
	Paths []policy.EscalationPath
}

// asksApprover reports whether Escalate would put err to a person or a
// command, who should then see a preview of the change: the call asked to
// escalate, the escalation would allow it, and the approval is neither
// trust nor never.
func (f *Fence) asksApprover(err error) bool {
	var denied *policy.DeniedError
	if !errors.As(err, &denied) || f.approver.To == "" || f.escalated || f.approver.HandOver || f.escalationRefusal(denied) != "" {
		return false
	}
	switch f.policy.Approval {
	case policy.ApprovalTTY, policy.ApprovalCommand:
		return f.approver.GrantRefusal == ""
	case policy.ApprovalSupervisor:
		return f.approver.GrantRefusal == "" && f.approver.Supervisor != nil
	}
	return false
}

// Escalate decides, once per call, whether the escalation asked for with
// --escalate lifts err, a denial CheckWrite returned for t: the mode it
// asks for must allow the change and be within max_mode, and the policy's
// approver must approve it, shown preview. Granted, the fence's mode
// widens for the rest of this call and t is checked again; refused, the
// denial comes back with reason ReasonNotApproved and the refusal. Any
// other error, or no escalation asked for, comes back as it is.
func (f *Fence) Escalate(err error, t *Target, preview Preview) error {
	var denied *policy.DeniedError
	if !errors.As(err, &denied) || f.approver.To == "" || f.escalated {
		return err
	}
	if refusal := f.escalationRefusal(denied); refusal != "" {
		denied.Refusal = refusal
		return denied
	}
	if f.approver.HandOver {
		return &policy.HandedOverError{Denied: denied, To: f.approver.To}
	}
	req := policy.EscalationRequest{Kind: policy.KindFile, Op: denied.Op, Path: t.Given, Resolved: t.Path, Reason: denied.Reason,
		Matched: denied.Matched, From: f.mode, To: f.approver.To, Paths: requestPaths(denied.Op, t, preview), EscalationContext: f.approver.Context,
		Diff: preview.Diff, DiffText: preview.Text}
	if err := f.approve(req); err != nil {
		denied.Cause, denied.Reason = denied.Reason, policy.ReasonNotApproved
		denied.Refusal = err.Error()
		return denied
	}
	f.mode, f.escalated = f.approver.To, true
	f.recordApproved(req)
	return f.CheckWrite(denied.Op, t)
}

// escalationRefusal says why the escalation asked for cannot lift denied
// whoever approves it, or "" when it could.
func (f *Fence) escalationRefusal(denied *policy.DeniedError) string {
	switch {
	case !f.approver.To.Wider(f.mode) || denied.Needed == "" || denied.Needed.Wider(f.approver.To):
		return fmt.Sprintf("--escalate %s would not allow it", f.approver.To)
	case f.approver.To.Wider(f.policy.MaxMode):
		return fmt.Sprintf("escalation to %s refused: %s %s", f.approver.To, policy.ReasonAboveMaxMode, f.policy.MaxMode)
	}
	return ""
}
