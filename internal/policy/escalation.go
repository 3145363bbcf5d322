package policy

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
// those (the fence checks it).
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

// EscalationRequest is what an approver is asked to approve. An
// approval_command reads it as one JSON object on its standard input.
type EscalationRequest struct {
	// Kind is what is asked about: KindFile (a change of files) or
	// KindNetworkHost (a host the session's proxy refused; Path names
	// it, and nothing is written).
	Kind     string `json:"kind"`
	Op       string `json:"op"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
	From     Mode   `json:"from"`
	To       Mode   `json:"to"`
	Reason   string `json:"reason"`
	Matched  string `json:"matched,omitempty"`
	// Paths are every path the call changes, with what it does to each:
	// what is approved is exactly this list (the fence checks it). Path
	// and Resolved above are the one whose denial asked.
	Paths []EscalationPath `json:"paths,omitempty"`
	EscalationContext
	// Diff is the bounded diff the change would apply, for write and edit.
	Diff any `json:"diff,omitempty"`
	// DiffText is Diff's text, for a person.
	DiffText string `json:"-"`
}

// Approver is what a front end gives a fence for one call
// (sandbox.Fence.SetApprover): the mode to escalate to, and how to ask
// for it. The fence decides
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
	// GrantRefusal, when set, is why this front end can grant no
	// escalation (dsh-fs mcp, whose process the kernel layer may already
	// restrict): every escalation that approval tty, command or trust
	// would put to its approver is refused with it, before anyone is
	// asked, so no person approves a change that then fails. never and
	// supervisor keep their own refusals. It never widens anything.
	GrantRefusal string
	// HandOver is for a front end that carries an escalation out in
	// another process, outside this one's kernel layer (dsh-fs mcp):
	// where the escalation asked for could lift a denial, Escalate asks
	// no one and hands the call over as a *HandedOverError, and the front
	// end runs it there, where the trusted approval decides. It never
	// widens anything here.
	HandOver bool
	// Noted, when set, is told of every escalation put to the approver
	// of the approval by: before it is asked (answered false), and with
	// the answer (nil: approved). It decides nothing: the brokered call
	// tells the session's audit log through it (docs/design.md §10).
	Noted func(req EscalationRequest, by Approval, answer error, answered bool)
}

// HandedOverError is Escalate's answer on a fence whose Approver has
// HandOver set: the escalation to To could lift Denied, and no one has
// been asked. Left unhandled it is the denial.
type HandedOverError struct {
	Denied *DeniedError
	To     Mode
}

func (e *HandedOverError) Error() string { return e.Denied.Error() }
func (e *HandedOverError) Unwrap() error { return e.Denied }
