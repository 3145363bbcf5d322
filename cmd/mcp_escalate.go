package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/diff"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
	"github.com/dshfs/dsh-fs/pkg/session"
)

// Escalation over MCP (docs/design.md §7). The server's process restricts
// itself with Landlock at its first write, for good, so a granted call
// cannot run there. It runs the way a dsh-fs exec session runs one: as a
// dsh-fs process outside the kernel layer, started by a supervisor that
// the model cannot reach, under a record of the server's policy, where
// the trusted approval decides and sees the diff. Inside an exec session
// that supervisor is exec itself (the session's channel); otherwise the
// server starts an escalator of its own before it serves anything.

// mcpElsewhere is where dsh-fs mcp sends the calls it runs escalated.
type mcpElsewhere struct {
	// broker is the channel to the supervisor that runs them.
	broker int
	// env carries what narrows the record there (inside an exec session,
	// the server's own flags).
	env []string
	// dir is the base of relative paths: the server's cwd.
	dir string
	// stop ends the server's own escalator and removes its record.
	stop func()
	// own says the escalator is the server's, not a dsh-fs exec
	// session's supervisor.
	own bool
}

// run sends the call args to the supervisor with stdin as its standard
// input, and returns its result line and exit status.
func (e *mcpElsewhere) run(args []string, stdin []byte) ([]byte, int, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, 0, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, 0, err
	}
	var wg sync.WaitGroup
	var out, notes bytes.Buffer
	wg.Add(3)
	go func() { defer wg.Done(); inW.Write(stdin); inW.Close() }()
	go func() { defer wg.Done(); io.Copy(&out, outR); outR.Close() }()
	go func() { defer wg.Done(); io.Copy(&notes, errR); errR.Close() }()
	rep, err := session.Forward(e.broker, session.Request{Args: args, Dir: e.dir, Env: e.env}, [3]*os.File{inR, outW, errW})
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		// The reader of stdin may never have been taken: unblock it.
		inW.Close()
	}
	wg.Wait()
	if err != nil {
		return nil, 0, err
	}
	if rep.Refused != "" {
		return nil, rep.Status, errors.New(rep.Refused)
	}
	return bytes.TrimSpace(out.Bytes()), rep.Status, nil
}

// escalated runs call, whose escalation the fence handed over (ee), and
// returns its result line: the CLI's result object, or an error. Where
// the client's user approves, the first round returns the question
// instead (ask), and the second runs the call pinned to what was shown.
func (m *mcpServer) escalated(req *mcp.CallToolRequest, f *sandbox.Fence, t sandbox.Target, ee *sandbox.ElsewhereError, call forwardedCall) (line json.RawMessage, ask *mcp.CallToolResult, err error) {
	if m.elsewhere == nil {
		return nil, nil, ee.Denied
	}
	args := call.args
	if m.asksClientUser() {
		state, ask, err := m.clientApproval(req, f, t, ee, call)
		if err != nil || ask != nil {
			return nil, ask, err
		}
		defer m.approvals.drop(grantKey(call.args[0], t.Path, ee.To))
		args = pinned(args, state)
	}
	path := args[len(args)-1]
	full := append(append(args[:len(args)-1:len(args)-1], "--"+config.FlagEscalate, string(ee.To), "--"), path)
	line, _, err = m.elsewhere.run(full, call.stdin)
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
		var fl failure
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
	f   failure
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
	if d.Omitted != "" || d.Truncated {
		out += fmt.Sprintf("[dsh-fs: diff %s; +%d -%d lines]\n", diffCut(d.Omitted), d.Added, d.Removed)
	}
	return out
}

// escalatorArg is the argument that makes a dsh-fs process dsh-fs mcp's
// escalator. Like exec's child it is not a command: it serves only the
// channel its parent handed down as fd 3, and asks its parent, over fd 4,
// what approval supervisor would ask a person.
const escalatorArg = "__mcp-escalator"

// The escalator's inherited descriptors.
const (
	escalatorBrokerFD = 3
	escalatorAsksFD   = 4
)

// runEscalator is the escalator's whole life: it runs the calls the
// server sends until the server is gone.
func runEscalator() int {
	self, err := os.Executable()
	if err != nil {
		return ExitFailed
	}
	asker := session.NewAsker(os.NewFile(escalatorAsksFD, "asks"))
	r := &callRunner{self: self, record: os.Getenv(session.Env), ask: asker.Ask}
	session.ServeAll(os.NewFile(escalatorBrokerFD, "broker"), r.run)
	return ExitOK
}

// startElsewhere readies the place where the server's escalated calls
// run, or says why there is none. Inside a dsh-fs exec session it is the
// session's supervisor; otherwise an escalator the server starts now,
// before its first write restricts it, under a record of its policy.
// ask answers approval supervisor for the escalator.
func startElsewhere(a *App, s *config.Settings, ask func(session.Ask) error) (*mcpElsewhere, string) {
	p := s.Policy
	if s.Session != nil {
		v, _ := a.LookupEnv(session.BrokerEnv)
		fd, err := session.EnvFD(v)
		if err == nil {
			err = session.CheckBroker(fd)
		}
		if err != nil {
			return nil, "no channel to the dsh-fs exec supervisor"
		}
		return &mcpElsewhere{broker: fd, env: s.NarrowingEnv(), dir: p.Cwd, stop: func() {}}, ""
	}
	switch p.Approval {
	case sandbox.ApprovalNever:
		return nil, "approval is never"
	case sandbox.ApprovalTTY:
		return nil, "approval tty has no terminal here"
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err.Error()
	}
	roots, err := sandbox.NewFence(p).Roots()
	if err != nil {
		return nil, err.Error()
	}
	xdg, _ := a.LookupEnv("XDG_RUNTIME_DIR")
	dir, err := session.Dir(xdg, sandbox.RootPaths(roots))
	if err != nil {
		return nil, "no private folder for its record: " + err.Error()
	}
	mine, theirs, err := session.NewBroker()
	if err != nil {
		session.Remove(dir)
		return nil, err.Error()
	}
	asks, asksTheirs, err := socketPair()
	if err != nil {
		mine.Close()
		theirs.Close()
		session.Remove(dir)
		return nil, err.Error()
	}
	// The record names the escalator as the session's supervisor: the
	// calls it runs trust an approver channel only from it
	// (session.CheckApprover). So it is written once the escalator runs,
	// before the first call reaches it.
	record := session.RecordPath(dir)
	c := exec.Command(self, escalatorArg)
	c.Args[0] = "dsh-fs"
	c.Env = append(withoutSessionVars(os.Environ()), session.Env+"="+record)
	// Never the MCP pipe: the escalator's own output is not the server's.
	c.Stdin, c.Stdout, c.Stderr = nil, nil, os.Stderr
	c.ExtraFiles = []*os.File{theirs, asksTheirs}
	err = c.Start()
	theirs.Close()
	asksTheirs.Close()
	if err == nil {
		rec := sessionRecord(s, roots)
		rec.Supervisor = c.Process.Pid
		if _, err = session.Write(dir, rec); err != nil {
			c.Process.Kill()
			c.Wait()
		}
	}
	if err != nil {
		mine.Close()
		asks.Close()
		session.Remove(dir)
		return nil, "the escalator: " + err.Error()
	}
	go session.AnswerAsks(asks, ask)
	stop := func() {
		mine.Close() // the escalator ends when its channel does
		c.Wait()
		asks.Close()
		session.Remove(dir)
	}
	return &mcpElsewhere{broker: int(mine.Fd()), dir: p.Cwd, stop: stop, own: true}, ""
}
