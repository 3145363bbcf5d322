package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// The events of an audit log, its lines' "event" (docs/design.md §10,
// the audit log). New events and fields may be added, none renamed.
const (
	EventSessionStart       = "session_start"
	EventEscalationAsked    = "escalation_asked"
	EventEscalationAnswered = "escalation_answered"
	EventBrokeredCall       = "brokered_call"
	EventNetwork            = "network"
	EventSessionEnd         = "session_end"
)

// The verdicts of a network event.
const (
	NetworkAllowed  = "allowed"
	NetworkRefused  = "refused"
	NetworkApproved = "approved"
	// NetworkNotApproved is a host put to the approver and refused.
	NetworkNotApproved = "not_approved"
)

// Event is one thing the supervisor records: its name and the one part
// that belongs to it. Write adds the sequence number, the time, the
// session and the chain.
type Event struct {
	Event      string      `json:"event"`
	Start      *Start      `json:"start,omitempty"`
	Escalation *Escalation `json:"escalation,omitempty"`
	Call       *Call       `json:"call,omitempty"`
	Network    *Network    `json:"network,omitempty"`
	End        *End        `json:"end,omitempty"`
}

// Summary stands for bytes the log never holds (a write's content, a
// diff, a command line): their size and SHA-256.
type Summary struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Summarize is b's Summary.
func Summarize(b []byte) *Summary {
	sum := sha256.Sum256(b)
	return &Summary{Bytes: len(b), SHA256: hex.EncodeToString(sum[:])}
}

// Source is a policy source that set a setting of the session.
type Source struct {
	Origin string `json:"origin"`
	From   string `json:"from,omitempty"`
	Trust  string `json:"trust"`
}

// Start is a session's start: the plan the supervisor applies, where
// its settings came from, and the command (its program, the rest
// summarized: an argument can carry a token).
type Start struct {
	Mode            string   `json:"mode"`
	Cwd             string   `json:"cwd"`
	Roots           []string `json:"roots"`
	Network         string   `json:"network"`
	NetworkAllow    []string `json:"network_allow"`
	Approval        string   `json:"approval"`
	NetworkApproval string   `json:"network_approval"`
	Enforce         string   `json:"enforce"`
	// Layers say which of the shell's layers hold (the record's *_held).
	Landlock       int      `json:"landlock_abi"`
	MountsHeld     bool     `json:"mounts_held"`
	NetworkHeld    bool     `json:"network_held"`
	ProcessesHeld  bool     `json:"processes_held"`
	GitHeld        bool     `json:"git_held"`
	Sources        []Source `json:"sources"`
	ConfigFiles    []string `json:"config_files"`
	Program        string   `json:"program"`
	Args           *Summary `json:"args"`
	Record         string   `json:"record"`
	SupervisorUser int      `json:"uid"`
}

// Escalation is an escalation put to the approver, as it was shown:
// every path and operation, the modes and reasons; the diff and the
// calling command line summarized (they carry the content).
type Escalation struct {
	Approval    string                  `json:"approval"`
	Kind        string                  `json:"kind"`
	Op          string                  `json:"op"`
	Path        string                  `json:"path"`
	Resolved    string                  `json:"resolved,omitempty"`
	From        string                  `json:"from"`
	To          string                  `json:"to"`
	Reason      string                  `json:"reason"`
	Paths       []policy.EscalationPath `json:"paths,omitempty"`
	Cwd         string                  `json:"cwd,omitempty"`
	Caller      *Summary                `json:"caller,omitempty"`
	ModelReason string                  `json:"model_reason,omitempty"`
	Diff        *Summary                `json:"diff,omitempty"`
	// Approved and Refused are the answer (escalation_answered only).
	Approved *bool  `json:"approved,omitempty"`
	Refused  string `json:"refused,omitempty"`
}

// Call is a brokered call and its result: the request with its inputs
// summarized, and what the call printed, in part.
type Call struct {
	Op       string   `json:"op"`
	Escalate string   `json:"escalate"`
	Dir      string   `json:"dir"`
	Paths    []string `json:"paths,omitempty"`
	Input    *Summary `json:"input,omitempty"`
	Caller   *Summary `json:"caller,omitempty"`
	Status   int      `json:"status"`
	Refused  string   `json:"refused,omitempty"`
	// OK, Code, Escalated and Mode are the result line's.
	OK        bool   `json:"ok"`
	Code      string `json:"code,omitempty"`
	Escalated bool   `json:"escalated"`
}

// Network is one decision of the session's proxy.
type Network struct {
	Verdict string `json:"verdict"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Addr    string `json:"addr,omitempty"`
	Why     string `json:"why,omitempty"`
	// Rule is the setting that allowed it; Command the granted program
	// (network_allow_commands); Via how it was reached (direct, or the
	// upstream proxy's address, never its credentials).
	Rule    string `json:"rule,omitempty"`
	Command string `json:"command,omitempty"`
	Via     string `json:"via,omitempty"`
}

// End is a session's end: CMD's exit status, or why no CMD ran, and the
// git guard's report.
type End struct {
	Status   int    `json:"status"`
	Error    string `json:"error,omitempty"`
	GitGuard any    `json:"git_guard,omitempty"`
}

// Asked is the escalation_asked event of req, put to the approver of
// the approval setting by; Answered the answer's, answer nil when
// approved.
func Asked(req policy.EscalationRequest, by policy.Approval) Event {
	return Event{Event: EventEscalationAsked, Escalation: shown(req, by)}
}

// Answered is the escalation_answered event of req.
func Answered(req policy.EscalationRequest, by policy.Approval, answer error) Event {
	e := shown(req, by)
	ok := answer == nil
	e.Approved = &ok
	if answer != nil {
		e.Refused = answer.Error()
	}
	return Event{Event: EventEscalationAnswered, Escalation: e}
}

// shown is what the approver of req was shown, with the diff and the
// command line summarized.
func shown(req policy.EscalationRequest, by policy.Approval) *Escalation {
	e := &Escalation{Approval: string(by), Kind: req.Kind, Op: req.Op, Path: req.Path, Resolved: req.Resolved,
		From: string(req.From), To: string(req.To), Reason: req.Reason, Paths: req.Paths, Cwd: req.Cwd, ModelReason: req.ModelReason}
	if len(req.Caller) > 0 {
		b, _ := json.Marshal(req.Caller)
		e.Caller = Summarize(b)
	}
	if req.Diff != nil {
		// The diff's whole object (its text and counts) is what the
		// approver read; its bytes stand for it.
		b, _ := json.Marshal(req.Diff)
		e.Diff = Summarize(b)
	}
	return e
}

// Brokered is the brokered_call event of req and its reply.
func Brokered(req wire.Request, rep wire.Reply) Event {
	c := &Call{Op: req.Op, Escalate: req.Escalate, Dir: req.Dir, Status: rep.Status, Refused: rep.Refused}
	switch {
	case req.Write != nil:
		c.Paths, c.Input = []string{req.Write.Path}, Summarize(req.Write.Content)
	case req.Edit != nil:
		c.Paths = slices.DeleteFunc(append([]string{req.Edit.Path}, req.Edit.Paths...), func(p string) bool { return p == "" })
		b, _ := json.Marshal(req.Edit.Edits)
		c.Input = Summarize(b)
	case req.Patch != nil:
		c.Input = Summarize(req.Patch.Patch)
	}
	if len(req.Caller) > 0 {
		b, _ := json.Marshal(req.Caller)
		c.Caller = Summarize(b)
	}
	var res struct {
		OK        bool `json:"ok"`
		Escalated bool `json:"escalated"`
		Error     struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(rep.Stdout), &res) == nil {
		c.OK, c.Escalated, c.Code = res.OK, res.Escalated, res.Error.Code
	}
	return Event{Event: EventBrokeredCall, Call: c}
}
