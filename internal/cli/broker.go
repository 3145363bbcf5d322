package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Brokered escalation (docs/design.md §10): inside a dsh-fs exec session
// the kernel layer refuses a write outside the writable roots whatever a
// call decides, so a call that asks to escalate does not try: once it has
// read its inputs (the content under its own fence, the edits), it sends
// the supervisor a typed request (wire.Request) over the socket the
// session inherited. The supervisor carries it out outside the kernel
// layer under the pinned policy, through the same fence and confined
// opens as any write, where the trusted approval decides; the call prints
// the result it gets back and exits with its status.

// brokerEscalation decides where a call of op that asks to escalate
// runs inside an exec session: the call the supervisor runs asks the
// supervisor through the channel it was given (approval supervisor) and
// runs here; any other mutation (brokeredOps) is forwarded (forward is
// true).
func (a *invocation) brokerEscalation(op string, s *config.Settings, approver *policy.Approver) (forward bool) {
	if s.Session == nil || !slices.Contains(brokeredOps, op) {
		return false
	}
	if v, _ := a.LookupEnv(wire.BrokeredEnv); v == "1" {
		approver.Noted = audit.Notes(a.LookupEnv)
		// Only a channel to the record's supervisor answers for it: the
		// variables say nothing a caller could not say itself.
		if fdText, ok := a.LookupEnv(wire.ApproverEnv); ok {
			if fd, err := wire.EnvFD(fdText); err == nil && wire.CheckApprover(fd, s.Session) == nil {
				// The channel answers this call alone: an approval_command
				// it runs must not inherit it.
				closeOnExec(fd)
				approver.Supervisor = func(req policy.EscalationRequest) error {
					return wire.AskSupervisor(fd, wire.Ask{Request: req, DiffText: req.DiffText})
				}
			}
		}
		return false
	}
	return true
}

// brokeredOps are the operations a session's supervisor carries out.
var brokeredOps = []string{wire.OpWrite, wire.OpEdit, wire.OpPatch, wire.OpMkdir, wire.OpMove, wire.OpRemove}

// forward sends req, this call's operation with its inputs, to the
// session's supervisor, prints the result it ran into and returns its
// exit status. A missing or closed channel is a denial, never a run of
// the call here, where the kernel would refuse it anyway.
func (c *call) forward(req wire.Request) error {
	a, s := c.app, c.settings
	refuse := func(why string) error {
		return &policy.DeniedError{Op: req.Op, Path: a.current.Path, Mode: s.Policy.Mode, Reason: policy.ReasonNotApproved,
			Refusal: "escalation refused: " + why, MaxMode: s.Policy.MaxMode, Approval: s.Policy.Approval}
	}
	v, ok := a.LookupEnv(wire.BrokerEnv)
	if !ok || v == "" {
		return refuse("no channel to the dsh-fs exec supervisor (" + wire.BrokerEnv + " is not set)")
	}
	fd, err := wire.EnvFD(v)
	if err != nil {
		return refuse("no channel to the dsh-fs exec supervisor: " + wire.BrokerEnv + " " + err.Error())
	}
	if req.Dir, err = os.Getwd(); err != nil {
		return refuse("no working directory: " + err.Error())
	}
	req.Escalate = string(c.escalate)
	req.Reason = c.reason
	for _, v := range config.Environment() {
		if val, ok := a.LookupEnv(v.Name); ok {
			req.Env = append(req.Env, v.Name+"="+val)
		}
	}
	// This call's own setting flags narrow there as they did here.
	req.Env = append(req.Env, s.NarrowingEnv()...)
	rep, err := wire.Forward(fd, req)
	if err != nil {
		return refuse("no channel to the dsh-fs exec supervisor: " + err.Error())
	}
	if rep.Refused != "" {
		return refuse(rep.Refused)
	}
	io.WriteString(a.Stderr, rep.Stderr)
	out := []byte(rep.Stdout)
	var pretty bytes.Buffer
	if a.pretty && !a.text && json.Indent(&pretty, bytes.TrimSpace(out), "", "  ") == nil {
		out = append(pretty.Bytes(), '\n')
	}
	a.Stdout.Write(out)
	return exitWith(rep.Status)
}

// readForwarded reads the content a forwarded write carries, at most
// maxForwardBytes of it.
func readForwarded(op, given string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxForwardBytes+1))
	if err != nil {
		return nil, fserr.FromOS(op+": reading the content", given, err)
	}
	if len(data) > maxForwardBytes {
		return nil, fserr.New(fserr.TooLarge, fmt.Sprintf("%s: %s: an escalated %s carries at most %d MiB", op, given, op, maxForwardBytes>>20))
	}
	return data, nil
}

// maxForwardBytes bounds the content of an escalated write: the request
// carries it whole (encoded, under session's bound of a request).
const maxForwardBytes = 32 << 20

// brokeredCaller is how the brokered call (supervisor.Entry) starts and
// renders the request it carries out: as this App's call of the
// request's op, with no flag of its own.
func (a *invocation) brokeredCaller() supervisor.Caller {
	return supervisor.Caller{Run: a.brokeredCall, Fail: func(err error) int {
		if !a.started {
			// The request could not be read: no call of its op began.
			a.current = result.Header{Op: "escalate"}
		}
		a.fail(err)
		return exitStatus(fserr.CodeOf(err))
	}}
}

// brokeredCall carries out req, a request a session forwarded, as the
// file tool carries out the same write, edit or patch, with its
// escalation; the result goes to stdout.
func (a *invocation) brokeredCall(req wire.Request) error {
	// No flag: the pinned record and the caller's variables are the
	// sources, as for any call inside the session.
	flags := pflag.NewFlagSet(req.Op, pflag.ContinueOnError)
	r := req.Typed()
	if r == nil {
		return fserr.New(fserr.InvalidArgument, "a request that carries no "+req.Op)
	}
	path, byName := "", false
	switch r := r.(type) {
	case request.Write:
		path = r.Path
	case request.Edit:
		path = r.Path
	case request.Mkdir:
		path, byName = r.Path, true
	case request.Move:
		path, byName = r.Source, true
	case request.Remove:
		path, byName = r.Path, true
	}
	call, err := a.beginWith(PolicyFlags{Settings: flags, Escalate: req.Escalate, Reason: req.Reason, Caller: req.Caller}, req.Op, path)
	if err != nil {
		return err
	}
	x := call.x
	if path != "" {
		resolve := x.Resolve
		if byName {
			resolve = x.ResolveName
		}
		t, err := resolve(path)
		a.current.Resolved = t.Path
		if err != nil {
			return err
		}
	}
	res, err := x.Run(r)
	if err != nil {
		return err
	}
	return call.print(res)
}
