package policy

import (
	"fmt"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Mode is a sandbox mode, ordered from narrowest to widest.
type Mode string

// The three modes of docs/design.md §1.
const (
	ReadOnly         Mode = "read-only"
	WorkspaceWrite   Mode = "workspace-write"
	DangerFullAccess Mode = "danger-full-access"
)

// Modes lists every mode, narrowest first.
var Modes = []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess}

// ParseMode returns the mode named s, or an FS_CONFIG_INVALID error that
// lists the valid names.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("unknown mode %q (want read-only, workspace-write or danger-full-access)", s))
}

func (m Mode) rank() int {
	for i, x := range Modes {
		if x == m {
			return i
		}
	}
	return -1
}

// Wider reports whether m allows more than o.
func (m Mode) Wider(o Mode) bool { return m.rank() > o.rank() }

// Approval says who approves an escalation (docs/design.md §7). Only a
// trusted source sets it: a model can answer any question it can reach.
type Approval string

// The approval settings.
const (
	// ApprovalSupervisor asks the person at the terminal of the dsh-fs
	// exec supervisor; outside such a session every escalation is refused.
	ApprovalSupervisor Approval = "supervisor"
	// ApprovalTTY asks whoever answers the controlling terminal: an
	// explicit opt-in, since a model can make a pseudo-terminal and
	// answer it itself.
	ApprovalTTY Approval = "tty"
	// ApprovalCommand runs the harness's approval_command.
	ApprovalCommand Approval = "command"
	// ApprovalTrust takes --escalate itself as the approval.
	ApprovalTrust Approval = "trust"
	// ApprovalNever refuses every escalation.
	ApprovalNever Approval = "never"
)

// ParseApproval returns the approval setting named s.
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case ApprovalSupervisor, ApprovalTTY, ApprovalCommand, ApprovalTrust, ApprovalNever:
		return a, nil
	}
	return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("unknown approval %q (want supervisor, tty, command, trust or never)", s))
}

// Enforce selects the kernel enforcement layer (docs/design.md §4 step 7).
type Enforce string

// The enforcement settings.
const (
	EnforceAuto     Enforce = "auto"
	EnforceLandlock Enforce = "landlock"
	EnforceOff      Enforce = "off"
)

// Weaker reports whether e enforces less than o: off < auto < landlock.
func (e Enforce) Weaker(o Enforce) bool { return enforceRank(e) < enforceRank(o) }

func enforceRank(e Enforce) int {
	switch e {
	case EnforceOff:
		return 0
	case EnforceLandlock:
		return 2
	}
	return 1
}

// ParseEnforce returns the enforcement setting named s.
func ParseEnforce(s string) (Enforce, error) {
	switch e := Enforce(s); e {
	case EnforceAuto, EnforceLandlock, EnforceOff:
		return e, nil
	}
	return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("unknown enforce %q (want auto, landlock or off)", s))
}
