package sandbox

import (
	"fmt"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// noSupervisor is the refusal of the default approval outside a dsh-fs
// exec session: no person the model cannot impersonate is there to ask.
const noSupervisor = "no dsh-fs exec supervisor to ask (the default approval); a trusted config file can set " +
	"approval: command with approval_command (the harness's approver), approval: trust, or approval: tty"

// SetApprover sets this call's escalation and its approver, replacing
// any set before.
func (f *Fence) SetApprover(a policy.Approver) { f.approver = a }

// approve puts one escalation to the policy's approver, and tells
// Noted of the question and its answer.
func (f *Fence) approve(req policy.EscalationRequest) error {
	note := f.approver.Noted
	if note == nil {
		note = func(policy.EscalationRequest, policy.Approval, error, bool) {}
	}
	note(req, f.policy.Approval, nil, false)
	err := f.decide(req)
	note(req, f.policy.Approval, err, true)
	return err
}

// decide is the answer of the policy's approver to req.
func (f *Fence) decide(req policy.EscalationRequest) error {
	a := f.approver
	switch f.policy.Approval {
	case policy.ApprovalTrust, policy.ApprovalTTY, policy.ApprovalCommand, policy.ApprovalSupervisor:
		if a.GrantRefusal != "" && (f.policy.Approval != policy.ApprovalSupervisor || a.Supervisor != nil) {
			return fmt.Errorf("escalation to %s refused: %s", req.To, a.GrantRefusal)
		}
	}
	switch f.policy.Approval {
	case policy.ApprovalTrust:
		return nil
	case policy.ApprovalNever:
		return fmt.Errorf("escalation to %s refused: approval is never", req.To)
	case policy.ApprovalTTY:
		if a.Terminal == nil {
			return fmt.Errorf("escalation to %s refused: no terminal to ask", req.To)
		}
		return a.Terminal(req)
	case policy.ApprovalCommand:
		if a.Command == nil {
			return fmt.Errorf("escalation to %s refused: no approval_command runner", req.To)
		}
		return a.Command(req)
	case policy.ApprovalSupervisor:
		if a.Supervisor != nil {
			return a.Supervisor(req)
		}
	}
	return fmt.Errorf("escalation to %s refused: %s", req.To, noSupervisor)
}
