package sandbox

import "fmt"

// noSupervisor is the refusal of the default approval outside a dsh-fs
// exec session: no person the model cannot impersonate is there to ask.
const noSupervisor = "no dsh-fs exec supervisor to ask (the default approval); a trusted config file can set " +
	"approval: command with approval_command (the harness's approver), approval: trust, or approval: tty"

// Approver is what a front end gives a fence for one call (SetApprover):
// the mode to escalate to, and how to ask for it. The fence decides
// whether an escalation could lift a denial and whether the policy's
// approval lets anyone be asked; the Approver's functions only ask, and
// package approval makes them (approval.New). Its zero value asks for no
// escalation.
type Approver struct {
	// To is the mode the call asked to escalate to (--escalate); "" asks
	// for none, and then nothing else here is used.
	To Mode
	// Context is where the call came from and why the model says it
	// needs the escalation, for the request (EscalationContext).
	Context EscalationContext
	// Terminal asks the person at the call's terminal (approval tty);
	// nil refuses.
	Terminal func(EscalationRequest) error
	// Command runs the policy's approval_command (approval command); nil
	// refuses.
	Command func(EscalationRequest) error
	// Supervisor asks the dsh-fs exec supervisor over the channel it
	// handed down, for a call it runs outside its session's kernel layer
	// (approval supervisor, docs/design.md §10); nil outside such a call.
	Supervisor func(EscalationRequest) error
	// NoGrant, when set, is for a front end that could not carry out a
	// granted escalation (dsh-fs mcp, whose process the kernel layer may
	// already restrict): every escalation that approval tty, command or
	// trust would put to its approver is refused with NoGrant, before
	// anyone is asked, so no person approves a change that then fails.
	// never and supervisor keep their own refusals. It never widens
	// anything.
	NoGrant string
	// Elsewhere is for a front end that carries an escalation out in
	// another process, outside this one's kernel layer (dsh-fs mcp):
	// where the escalation asked for could lift a denial, Escalate asks
	// no one and returns an *ElsewhereError, and the front end runs the
	// call there, where the trusted approval decides. It never widens
	// anything here.
	Elsewhere bool
	// Noted, when set, is told of every escalation put to the approver
	// of the approval by: before it is asked (answered false), and with
	// the answer (nil: approved). It decides nothing: the brokered call
	// tells the session's audit log through it (docs/design.md §10).
	Noted func(req EscalationRequest, by Approval, answer error, answered bool)
}

// SetApprover sets this call's escalation and its approver, replacing
// any set before.
func (f *Fence) SetApprover(a Approver) { f.approver = a }

// approve puts one escalation to the policy's approver, and tells
// Noted of the question and its answer.
func (f *Fence) approve(req EscalationRequest) error {
	note := f.approver.Noted
	if note == nil {
		note = func(EscalationRequest, Approval, error, bool) {}
	}
	note(req, f.policy.Approval, nil, false)
	err := f.decide(req)
	note(req, f.policy.Approval, err, true)
	return err
}

// decide is the answer of the policy's approver to req.
func (f *Fence) decide(req EscalationRequest) error {
	a := f.approver
	switch f.policy.Approval {
	case ApprovalTrust, ApprovalTTY, ApprovalCommand, ApprovalSupervisor:
		if a.NoGrant != "" && (f.policy.Approval != ApprovalSupervisor || a.Supervisor != nil) {
			return fmt.Errorf("escalation to %s refused: %s", req.To, a.NoGrant)
		}
	}
	switch f.policy.Approval {
	case ApprovalTrust:
		return nil
	case ApprovalNever:
		return fmt.Errorf("escalation to %s refused: approval is never", req.To)
	case ApprovalTTY:
		if a.Terminal == nil {
			return fmt.Errorf("escalation to %s refused: no terminal to ask", req.To)
		}
		return a.Terminal(req)
	case ApprovalCommand:
		if a.Command == nil {
			return fmt.Errorf("escalation to %s refused: no approval_command runner", req.To)
		}
		return a.Command(req)
	case ApprovalSupervisor:
		if a.Supervisor != nil {
			return a.Supervisor(req)
		}
	}
	return fmt.Errorf("escalation to %s refused: %s", req.To, noSupervisor)
}
