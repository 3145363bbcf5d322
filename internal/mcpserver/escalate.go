package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/patch"
	"github.com/dshfs/dsh-fs/internal/result"
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
		fl, _ := result.DecodeFailure(line)
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

// writePreview and editPreview preview a write or an edit of t for the
// client's user (forwardedCall.preview).
func (m *server) writePreview(f *sandbox.Fence, t sandbox.Target, opt fsops.WriteOptions) func() (diff.Result, approvalState, error) {
	return func() (diff.Result, approvalState, error) {
		opt.Diff = m.diffOptions(diff.FormFull)
		res, err := fsops.PreviewWrite(f, t, opt)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		return res.Diff, approvalState{Previous: res.PreviousSHA256, Exists: !res.Created}, nil
	}
}

func (m *server) editPreview(f *sandbox.Fence, t sandbox.Target, opt fsops.EditOptions) func() (diff.Result, approvalState, error) {
	return func() (diff.Result, approvalState, error) {
		opt.Diff = m.diffOptions(diff.FormFull)
		res, err := fsops.PreviewEdit(f, t, opt)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		return res.Diff, approvalState{Previous: res.PreviousSHA256, Exists: true}, nil
	}
}

// patchPreview previews a patch for the client's user: the whole patch's
// diff, and the content of each file it was shown against, to which the
// patch is pinned.
func (m *server) patchPreview(f *sandbox.Fence, p *patch.Patch, opt fsops.PatchOptions) func() (diff.Result, approvalState, error) {
	return func() (diff.Result, approvalState, error) {
		opt.Diff = m.diffOptions(diff.FormFull)
		d, pins, err := fsops.PreviewPatch(f, p, opt)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		return d, approvalState{Pins: pins}, nil
	}
}
