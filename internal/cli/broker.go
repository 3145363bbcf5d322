package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// Brokered escalation (docs/design.md §10): inside a dsh-fs exec session
// the kernel layer refuses a write outside the writable roots whatever a
// call decides, so a call that asks to escalate does not try: once it has
// read its inputs (the content under its own fence, the edits), it sends
// the supervisor a typed request (session.Request) over the socket the
// session inherited. The supervisor carries it out outside the kernel
// layer under the pinned policy, through the same fence and confined
// opens as any write, where the trusted approval decides; the call prints
// the result it gets back and exits with its status.

// brokerEscalation decides where a call of op that asks to escalate
// runs inside an exec session: the call the supervisor runs asks the
// supervisor through the channel it was given (approval supervisor) and
// runs here; any other write or edit is forwarded (forward is true).
func (a *App) brokerEscalation(op string, s *config.Settings, approver *sandbox.Approver) (forward bool) {
	if s.Session == nil || op != session.OpWrite && op != session.OpEdit && op != session.OpPatch {
		return false
	}
	if v, _ := a.LookupEnv(session.BrokeredEnv); v == "1" {
		// Only a channel to the record's supervisor answers for it: the
		// variables say nothing a caller could not say itself.
		if fdText, ok := a.LookupEnv(session.ApproverEnv); ok {
			if fd, err := session.EnvFD(fdText); err == nil && session.CheckApprover(fd, s.Session) == nil {
				approver.Supervisor = func(req sandbox.EscalationRequest) error {
					return session.AskSupervisor(fd, session.Ask{Request: req, DiffText: req.DiffText})
				}
			}
		}
		return false
	}
	return true
}

// forward sends req, this call's operation with its inputs, to the
// session's supervisor, prints the result it ran into and returns its
// exit status. A missing or closed channel is a denial, never a run of
// the call here, where the kernel would refuse it anyway.
func (c *call) forward(req session.Request) error {
	a, s := c.app, c.settings
	refuse := func(why string) error {
		return &sandbox.DeniedError{Op: req.Op, Path: a.current.Path, Mode: s.Policy.Mode, Reason: sandbox.ReasonNotApproved,
			Refusal: "escalation refused: " + why, MaxMode: s.Policy.MaxMode, Approval: s.Policy.Approval}
	}
	v, ok := a.LookupEnv(session.BrokerEnv)
	if !ok || v == "" {
		return refuse("no channel to the dsh-fs exec supervisor (" + session.BrokerEnv + " is not set)")
	}
	fd, err := session.EnvFD(v)
	if err != nil {
		return refuse("no channel to the dsh-fs exec supervisor: " + session.BrokerEnv + " " + err.Error())
	}
	if req.Dir, err = os.Getwd(); err != nil {
		return refuse("no working directory: " + err.Error())
	}
	req.Path, req.Escalate = a.current.Path, string(c.escalate)
	for name := range settingVariables() {
		if val, ok := a.LookupEnv(name); ok {
			req.Env = append(req.Env, name+"="+val)
		}
	}
	// This call's own setting flags narrow there as they did here.
	req.Env = append(req.Env, s.NarrowingEnv()...)
	rep, err := session.Forward(fd, req)
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

// callRunner carries out the requests a session forwards, for the exec
// supervisor and for dsh-fs mcp's escalator alike.
type callRunner struct {
	self   string // this executable
	record string // the record the calls run under
	// ask answers approval supervisor: the person at exec's terminal, or
	// the MCP client's user.
	ask func(session.Ask) error
}

// run carries out one request a session forwarded (session.DecodeRequest
// checked its shape): as this executable in a process of its own
// (brokeredCallArg), outside the kernel layer, under the pinned record,
// with the caller's session variables (they may only narrow). The
// request reaches that process typed, over a pipe; approval supervisor
// is put to r.ask.
func (r *callRunner) run(req session.Request) session.Reply {
	cannot := func(err error) session.Reply {
		return session.Reply{Status: ExitFailed, Refused: "the supervisor cannot run it: " + err.Error()}
	}
	mine, theirs, err := socketPair()
	if err != nil {
		return cannot(err)
	}
	defer mine.Close()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		theirs.Close()
		return cannot(err)
	}
	c := exec.Command(r.self, brokeredCallArg)
	c.Args[0] = "dsh-fs"
	env := withoutSessionVars(os.Environ())
	for _, kv := range req.Env {
		name, _, _ := strings.Cut(kv, "=")
		if settingVariables()[name] {
			env = append(env, kv)
		}
	}
	c.Env = append(env, session.Env+"="+r.record, session.BrokeredEnv+"=1", fmt.Sprintf("%s=%d", session.ApproverEnv, brokeredApproverFD))
	c.Dir = req.Dir
	var stdout, stderr boundedBuffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.ExtraFiles = []*os.File{theirs, reqR}
	err = c.Start()
	theirs.Close()
	reqR.Close()
	if err != nil {
		reqW.Close()
		return cannot(err)
	}
	go func() {
		json.NewEncoder(reqW).Encode(req)
		reqW.Close()
	}()
	go session.AnswerAsks(mine, r.ask)
	err = c.Wait()
	return session.Reply{Status: exitStatusOf(c.ProcessState, err), Stdout: stdout.String(), Stderr: stderr.String()}
}

// boundedBuffer keeps the first maxReplyOutput bytes written to it and
// drops the rest: a call's result is bounded already, its notes may not be.
type boundedBuffer struct{ bytes.Buffer }

const maxReplyOutput = 8 << 20

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := maxReplyOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// brokeredCallArg makes a dsh-fs process carry out one request the
// supervisor hands it: not a command, and nothing but the request on
// brokeredRequestFD reaches it.
const brokeredCallArg = "__brokered-call"

// The brokered call's inherited descriptors: the approver channel to the
// supervisor, and the request.
const (
	brokeredApproverFD = 3
	brokeredRequestFD  = 4
)

// runBrokered is the brokered call's whole life: it decodes the request,
// strictly again, and carries it out as the file tool carries out the
// same write or edit, with its escalation; the result goes to stdout.
func (a *App) runBrokered() int {
	a.current = Header{Op: "escalate"}
	f := os.NewFile(brokeredRequestFD, "request")
	req, err := session.DecodeRequest(f)
	f.Close()
	if err == nil {
		err = a.brokeredCall(req)
	} else {
		err = fserr.New(fserr.InvalidArgument, err.Error())
	}
	if err == nil {
		return ExitOK
	}
	a.fail(err)
	return exitStatus(fserr.CodeOf(err))
}

func (a *App) brokeredCall(req session.Request) error {
	// No flag: the pinned record and the caller's variables are the
	// sources, as for any call inside the session.
	flags := pflag.NewFlagSet(req.Op, pflag.ContinueOnError)
	call, err := a.beginWith(flags, req.Op, req.Path, req.Escalate)
	if err != nil {
		return err
	}
	diffOpts, err := call.diffOptionsFor(req.Op, req.Diff)
	if err != nil {
		return err
	}
	if req.Op == session.OpPatch {
		p, err := fsops.ParsePatch(req.Patch.Patch)
		if err != nil {
			return err
		}
		res, err := fsops.Patch(call.fence, p, fsops.PatchOptions{IfMatch: req.Patch.IfMatch, DryRun: req.DryRun, Diff: diffOpts})
		if err != nil {
			return err
		}
		return call.print(res)
	}
	t, err := call.resolve(req.Path)
	if err != nil {
		return err
	}
	var res any
	switch req.Op {
	case session.OpWrite:
		w := req.Write
		res, err = fsops.Write(call.fence, t, fsops.WriteOptions{Content: bytes.NewReader(w.Content), Mkdir: w.Mkdir,
			IfMatch: req.IfMatch, Overwrite: w.Overwrite, DryRun: req.DryRun, Diff: diffOpts, Encoding: w.Encoding})
	case session.OpEdit:
		res, err = fsops.Edit(call.fence, t, fsops.EditOptions{Edits: req.Edit.Edits, IfMatch: req.IfMatch, DryRun: req.DryRun, Diff: diffOpts})
	}
	if err != nil {
		return err
	}
	return call.print(res)
}

// askTerminal puts one escalation to the person at the supervisor's
// terminal, one at a time.
func (s *supervisor) askTerminal(a session.Ask) error {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	req := a.Request
	req.DiffText = a.DiffText
	if s.relay != nil {
		// Nothing of the session reaches the person's terminal while
		// the question is up, nor reads the answer.
		in, out, resume := s.relay.Pause()
		defer resume()
		if in != nil {
			return approval.AskOnTerminal(in, out, req)
		}
	}
	return approval.AskAtTerminal(req)
}

// socketPair returns two connected stream sockets, neither inherited by
// accident.
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "approver"), os.NewFile(uintptr(fds[1]), "approver-child"), nil
}
