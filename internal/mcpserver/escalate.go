package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Escalation over MCP (docs/design.md §7). The server's process restricts
// itself with Landlock at its first write, for good, so a granted call
// cannot run there. It runs the way a dsh-fs exec session runs one: as a
// dsh-fs process outside the kernel layer, started by a supervisor that
// the model cannot reach, under a record of the server's policy, where
// the trusted approval decides and sees the diff. Inside an exec session
// that supervisor is exec itself (the session's channel); otherwise the
// server starts an escalator of its own before it serves anything.

// escalateArgs is what a mutating tool's arguments ask: the mode
// (escalate) and the model's reason for it (reason, dsh_* tools only).
type escalateArgs struct{ To, Reason string }

// mutated is the outcome of a mutating tool's typed request: run here
// (res, the request's result struct) or, escalated, elsewhere (line, the
// CLI's result object), or the question for the client's user (ask).
type mutated struct {
	// op is the request's operation, as the result's header names it.
	op string
	x  *request.Exec
	// t is the call's path, resolved (failure or not), for the header.
	t   sandbox.Target
	res any
	// handedOver says the fence handed the call over: line, ask and err
	// are then the escalated call's (escalated).
	handedOver bool
	line       json.RawMessage
	ask        *mcp.CallToolResult
	err        error
}

// mutate begins the call of r on path (a patch's is "."), with the
// escalation it asks for, and runs r through internal/request: here, or
// elsewhere where the fence hands its escalation over. refuse, when not
// nil, is the call's error once its path resolved (an argument the
// request would take but the tool refuses), and r does not run.
func (m *server) mutate(req *mcp.CallToolRequest, path string, esc escalateArgs, r request.Request, refuse error) mutated {
	x, t, err := m.beginMutation(req.Session, path, esc, true)
	o := mutated{op: r.Op(), x: x, t: t}
	if err == nil {
		err = refuse
	}
	if err == nil {
		o.res, err = x.Run(r)
	}
	var ee *policy.HandedOverError
	if errors.As(err, &ee) {
		o.handedOver = true
		o.line, o.ask, err = m.escalated(req, x, t, ee, r, esc.Reason)
	}
	o.err = err
	return o
}

// escalated runs r, whose escalation the fence of x handed over (ee), and
// returns its result line: the CLI's result object, or an error. Where
// the client's user approves, the first round returns the question
// instead (ask), and the second runs the call pinned to what was shown.
// The approval is asked, and taken, for t, or for a patch the file the
// fence denied first, as the escalated call's fence asks for it.
func (m *server) escalated(req *mcp.CallToolRequest, x *request.Exec, t sandbox.Target, ee *policy.HandedOverError, r request.Request, reason string) (line json.RawMessage, ask *mcp.CallToolResult, err error) {
	if _, ok := r.(request.Patch); ok {
		if t, err = x.Resolve(ee.Denied.Path); err != nil {
			return nil, nil, err
		}
	}
	if m.runner == nil {
		return nil, nil, ee.Denied
	}
	forward := r
	if m.asksClientUser() {
		state, ask, err := m.clientApproval(req, x, t, ee, r, reason)
		if err != nil || ask != nil {
			return nil, ask, err
		}
		defer m.approvals.drop(grantKey(r.Op(), t.Path, ee.To, state.Paths))
		forward = pinned(forward, state)
	}
	sent := wire.Carrying(forward)
	sent.Escalate = string(ee.To)
	sent.Reason = reason
	line, _, err = m.runner.Run(sent)
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
func refuseEscalation(ee *policy.HandedOverError, why string) error {
	ee.Denied.Reason, ee.Denied.Cause = policy.ReasonNotApproved, ee.Denied.Reason
	ee.Denied.Refusal = "escalation to " + string(ee.To) + " refused: " + why
	return ee.Denied
}

// refusal is an approver's refusal of req.
func refusal(req policy.EscalationRequest, why string) error {
	return fmt.Errorf("escalation to %s refused: %s", req.To, why)
}

// preview is what the client's user is shown of r, a write, an edit or a
// patch (its Preview): the full diff, and the content it was shown
// against (approvalState without its Call), to which the call is pinned.
func preview(x *request.Exec, r request.Request) (diff.Result, approvalState, error) {
	switch r := r.(type) {
	case request.Write:
		res, err := r.Preview(x)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		op := policy.PathUpdate
		if res.Created {
			op = policy.PathCreate
		}
		return res.Diff, approvalState{Previous: res.PreviousSHA256, Exists: !res.Created, Paths: onePath(x, r.Path, op)}, nil
	case request.Edit:
		res, err := r.Preview(x)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		return res.Diff, approvalState{Previous: res.PreviousSHA256, Exists: true, Paths: onePath(x, r.Path, policy.PathUpdate)}, nil
	case request.Patch:
		res, err := r.Preview(x)
		if err != nil {
			return diff.Result{}, approvalState{}, err
		}
		return res.Diff, approvalState{Pins: res.Pins, Paths: res.Paths}, nil
	}
	return diff.Result{}, approvalState{}, fserr.New(fserr.InvalidArgument, r.Op()+": no escalated path")
}

// onePath is what a change of one path shows: op on path, resolved as
// the escalated call resolves it.
func onePath(x *request.Exec, path, op string) []policy.EscalationPath {
	t, err := x.Resolve(path)
	if err != nil {
		return nil
	}
	return []policy.EscalationPath{sandbox.PathOf(op, t)}
}
