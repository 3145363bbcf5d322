package approval

import (
	"errors"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// ApproveHost puts a host the session's proxy refused (req, of op
// policy.OpNetwork, kind policy.KindNetworkHost) to whoever the
// trusted network_approval names: approval_command, or the person at
// the supervisor's terminal (ask). Approved, the session may connect to
// it until it ends. network_approval none (the default) refuses without
// asking anyone: the file approval never decides a host, since an
// approval_command written for files would approve any host the model
// names.
func ApproveHost(p policy.Policy, req EscalationRequest, ask func(EscalationRequest) error) error {
	req.Kind = policy.KindNetworkHost
	switch p.NetworkApproval {
	case policy.NetworkApprovalCommand:
		if err := RunCommand(p.ApprovalCommand, p.ApprovalTimeoutSeconds, p.Home, req); err != nil {
			return errors.New(strings.Replace(err.Error(), "escalation to "+string(req.To)+" refused", "not approved", 1))
		}
		return nil
	case policy.NetworkApprovalSupervisor:
		if ask == nil {
			return errors.New("not approved: no dsh-fs exec supervisor to ask")
		}
		if err := ask(req); err != nil {
			return errors.New(strings.Replace(err.Error(), "escalation to "+string(req.To)+" refused", "not approved", 1))
		}
		return nil
	}
	return errors.New("not asked: network_approval is none (a trusted network_approval: command or supervisor would ask)")
}
