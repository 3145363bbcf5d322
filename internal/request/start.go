package request

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Start is what a front end knows of a call as it begins: the policy
// its settings loaded, the bounds of its results, its memory, and the
// escalation it asks for. Begin turns it into the call's Exec.
type Start struct {
	// Policy is the call's policy; the fence is built from it.
	Policy policy.Policy
	// Bounds are the limits of the call's settings.
	Bounds Bounds
	// Memory is the session's memory of its reads; nil remembers nothing.
	Memory Memory
	// Escalate is the mode the call asks for, as given: "" asks for
	// none. Reason is why the model says it needs it.
	Escalate, Reason string
	// Approver is what the front end adds to the approver the policy
	// makes (approval.New) when the call asks to escalate: where it
	// comes from (Context), and how a granted escalation is carried out
	// when not here (Supervisor, HandOver, GrantRefusal, Noted). Its To,
	// Terminal and Command are the policy's; whatever it says there is
	// ignored.
	Approver policy.Approver
	// Names are how the front end's user gives the escalation, for the
	// errors: "--escalate" and "--reason" on a command line; the zero
	// value says escalate and reason, as a tool's arguments.
	Names Names
}

// Names are the names of a front end's inputs for the escalation, as
// its user types them. One that starts with "--" is a flag.
type Names struct {
	Escalate, Reason string
}

// Begin starts a call: the fence of s.Policy, with the escalation s asks
// for and its approver set, under an Exec with s's bounds and memory. It
// always returns the Exec, so that a failure can name the call's mode;
// an escalation that cannot be asked for (an unknown mode, a reason
// without an escalation or over policy.MaxModelReason bytes) is
// FS_INVALID_ARGUMENT, and then the Exec carries no escalation. It
// decides nothing and asks no one: the fence asks the approver when a
// denial comes up. It never restricts the process.
func Begin(s Start) (*Exec, error) {
	fence := sandbox.NewFence(s.Policy)
	x := New(fence, s.Bounds)
	x.Remember(s.Memory)
	escalate, reason := s.Names.escalate(), s.Names.reason()
	if s.Reason != "" && s.Escalate == "" || len(s.Reason) > policy.MaxModelReason {
		return x, fserr.New(fserr.InvalidArgument, fmt.Sprintf("%s: says why an escalation is needed, in at most %d bytes; give it with %s",
			label(reason), policy.MaxModelReason, escalate))
	}
	if s.Escalate == "" {
		return x, nil
	}
	mode, err := policy.ParseMode(s.Escalate)
	if err != nil {
		return x, fserr.New(fserr.InvalidArgument, label(escalate)+": "+err.Error())
	}
	asked := approval.New(s.Policy, mode)
	a := s.Approver
	a.To, a.Terminal, a.Command = asked.To, asked.Terminal, asked.Command
	fence.SetApprover(a)
	return x, nil
}

func (n Names) escalate() string {
	if n.Escalate == "" {
		return "escalate"
	}
	return n.Escalate
}

func (n Names) reason() string {
	if n.Reason == "" {
		return "reason"
	}
	return n.Reason
}

// label is how an error names the input name: "flag --escalate" for a
// flag, the name itself for an argument.
func label(name string) string {
	if strings.HasPrefix(name, "--") {
		return "flag " + name
	}
	return name
}
