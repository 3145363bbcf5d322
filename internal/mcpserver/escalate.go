package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Escalation over MCP (docs/design.md §7). The server's process restricts
// itself with Landlock at its first write, for good, so a granted call
// cannot run there. It runs the way a dsh-fs exec session runs one: as a
// dsh-fs process outside the kernel layer, started by a supervisor that
// the model cannot reach, under a record of the server's policy, where
// the trusted approval decides and sees the diff. Inside an exec session
// that supervisor is exec itself (the session's channel); otherwise the
// server starts an escalator of its own before it serves anything.

// escalated runs call, whose escalation the fence handed over (ee), and
// returns its result line: the CLI's result object, or an error. Where
// the client's user approves, the first round returns the question
// instead (ask), and the second runs the call pinned to what was shown.
func (m *server) escalated(req *mcp.CallToolRequest, f *sandbox.Fence, t sandbox.Target, ee *sandbox.ElsewhereError, call forwardedCall) (line json.RawMessage, ask *mcp.CallToolResult, err error) {
	if m.elsewhere == nil {
		return nil, nil, ee.Denied
	}
	forward := call.req
	if m.asksClientUser() {
		state, ask, err := m.clientApproval(req, f, t, ee, call)
		if err != nil || ask != nil {
			return nil, ask, err
		}
		defer m.approvals.drop(grantKey(call.req.Op, t.Path, ee.To))
		forward = pinned(forward, state)
	}
	forward.Escalate = string(ee.To)
	line, _, err = m.elsewhere.Run(forward)
	if err != nil {
		return nil, nil, refuseEscalation(ee, "the escalated call could not be run: "+err.Error())
	}
	var head struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(line, &head) != nil {
		return nil, nil, fserr.New(fserr.IO, "the escalated call gave no result")
	}
	if !head.OK {
		var fl cli.Failure
		json.Unmarshal(line, &fl)
		return line, nil, &forwardedFailure{f: fl, raw: line}
	}
	return line, nil, nil
}

// refuseEscalation is ee's denial, refused for why.
func refuseEscalation(ee *sandbox.ElsewhereError, why string) error {
	ee.Denied.Reason, ee.Denied.Cause = sandbox.ReasonNotApproved, ee.Denied.Reason
	ee.Denied.Refusal = "escalation to " + string(ee.To) + " refused: " + why
	return ee.Denied
}

// refusal is an approver's refusal of req.
func refusal(req sandbox.EscalationRequest, why string) error {
	return fmt.Errorf("escalation to %s refused: %s", req.To, why)
}

// forwardedFailure is the failure result of a call run elsewhere.
type forwardedFailure struct {
	f   cli.Failure
	raw json.RawMessage
}

func (e *forwardedFailure) Error() string    { return e.f.Error.Message }
func (e *forwardedFailure) Code() fserr.Code { return e.f.Error.Code }

// text is what toolError says of it: the lines a denial here would give.
func (e *forwardedFailure) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s\ncode: %s", e.f.Error.Message, e.f.Error.Code)
	if e.f.Marker != "" {
		fmt.Fprintf(&b, "\n%s", e.f.Marker)
		if e.f.Error.Reason != "" {
			fmt.Fprintf(&b, "\nreason: %s", e.f.Error.Reason)
		}
		if len(e.f.Error.WritableRoots) > 0 {
			fmt.Fprintf(&b, "\nwritable roots: %s", strings.Join(e.f.Error.WritableRoots, ", "))
		}
		if e.f.Escalation != nil && e.f.Error.Reason == sandbox.ReasonNotApproved {
			fmt.Fprintf(&b, "\nhint: %s", e.f.Escalation.Hint)
		}
		b.WriteString("\nThe sandbox refused this call: do not try to get around it; if the change is needed, ask the user.")
	} else if e.f.Error.Hint != "" {
		fmt.Fprintf(&b, "\nhint: %s", e.f.Error.Hint)
	}
	return b.String()
}

// editedText is edit_file's text for a diff: the unified diff in a fence
// long enough for its content, and a note when it is not whole.
func editedText(d diff.Result) string {
	t := d.Text
	if t != "" && !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	fence := "```"
	for strings.Contains(t, fence) {
		fence += "`"
	}
	out := fence + "diff\n" + t + fence + "\n\n"
	switch {
	case d.Omitted != "":
		// Nothing was compared, so nothing is counted.
		out += "[dsh-fs: diff left out (" + omittedWhy(d.Omitted) + "); the edit was made]\n"
	case d.Truncated:
		out += fmt.Sprintf("[dsh-fs: diff truncated at diff_max_bytes; +%d -%d lines]\n", d.Added, d.Removed)
	}
	return out
}
