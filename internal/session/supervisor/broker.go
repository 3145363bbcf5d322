//go:build unix

package supervisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// callRunner carries out the requests a session forwards, for the exec
// supervisor and for dsh-fs mcp's escalator alike.
type callRunner struct {
	self   string // this executable
	record string // the record the calls run under
	// ask answers approval supervisor: the person at exec's terminal, or
	// the MCP client's user.
	ask func(wire.Ask) error
	// denials is the session's log of refusals; nil keeps none.
	denials *denials.Log
	// notes is the session's audit log, told of the escalations the
	// calls put to their approvers; nil without one.
	notes *audit.Log
}

// run carries out one request a session forwarded (wire.DecodeRequest
// checked its shape): as this executable in a process of its own
// (argBrokeredCall), outside the kernel layer, under the pinned record,
// with the caller's session variables (they may only narrow). The
// request reaches that process typed, over a pipe; approval supervisor
// is put to r.ask.
func (r *callRunner) run(req wire.Request) wire.Reply {
	cannot := func(err error) wire.Reply {
		return wire.Reply{Status: statusFailed, Refused: "the supervisor cannot run it: " + err.Error()}
	}
	mine, theirs, err := SocketPair()
	if err != nil {
		return cannot(err)
	}
	defer mine.Close()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		theirs.Close()
		return cannot(err)
	}
	c := selfCommand(r.self, argBrokeredCall)
	env := WithoutSessionVars(os.Environ())
	for _, kv := range req.Env {
		name, _, _ := strings.Cut(kv, "=")
		if settingVariables()[name] {
			env = append(env, kv)
		}
	}
	c.Env = append(env, wire.Env+"="+r.record, wire.BrokeredEnv+"=1", fmt.Sprintf("%s=%d", wire.ApproverEnv, brokeredApproverFD))
	c.Dir = req.Dir
	var stdout, stderr boundedBuffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.ExtraFiles = []*os.File{theirs, reqR}
	notes := r.openNotes(c)
	err = c.Start()
	notes.started()
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
	go wire.AnswerAsks(mine, r.ask)
	err = c.Wait()
	reply := wire.Reply{Status: exitStatusOf(c.ProcessState, err), Stdout: stdout.String(), Stderr: stderr.String()}
	notes.wait()
	r.denials.Brokered(req, reply.Status, reply.Stdout)
	return reply
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

// The brokered call's inherited descriptors: the approver channel to the
// supervisor, and the request.
const (
	brokeredApproverFD = 3
	brokeredRequestFD  = 4
)

// askTerminal puts one escalation to the person at the supervisor's
// terminal, one at a time.
func (s *supervisor) askTerminal(a wire.Ask) error {
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
