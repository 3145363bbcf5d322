package approval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// ApproveHost puts a host the session's proxy refused (req, of op
// sandbox.OpNetwork) to the policy's approver, where it is one that asks:
// approval_command, or the person at the supervisor's terminal (ask).
// Approved, the session may connect to it until it ends. Every other
// approval refuses without asking: trust would make allowlist on, and a
// terminal the session shares (tty) can be answered by the session.
func ApproveHost(p sandbox.Policy, req EscalationRequest, ask func(EscalationRequest) error) error {
	switch p.Approval {
	case sandbox.ApprovalCommand:
		if err := RunCommand(p.ApprovalCommand, p.ApprovalTimeoutSeconds, p.Home, req); err != nil {
			return errors.New(strings.Replace(err.Error(), "escalation to "+string(req.To)+" refused", "not approved", 1))
		}
		return nil
	case sandbox.ApprovalSupervisor:
		if ask == nil {
			return errors.New("not approved: no dsh-fs exec supervisor to ask")
		}
		if err := ask(req); err != nil {
			return errors.New(strings.Replace(err.Error(), "escalation to "+string(req.To)+" refused", "not approved", 1))
		}
		return nil
	}
	return fmt.Errorf("not asked: approval %s approves no host (command or supervisor would ask)", p.Approval)
}
