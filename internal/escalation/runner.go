// Package escalation readies the place where dsh-fs mcp runs the calls
// it escalates: a process outside the server's kernel layer, started by a
// supervisor the model cannot reach, under a record of the server's
// policy, where the trusted approval decides and sees the diff
// (docs/design.md §7). Inside a dsh-fs exec session that supervisor is
// exec itself; otherwise it is an escalator the server starts (Start).
// Nothing here speaks MCP, and nothing here is the escalator's own body:
// internal/session/supervisor starts it (supervisor.EscalatorCommand) and runs it, with the
// record and channels every supervisor hands the processes it starts.
package escalation

import (
	"bytes"
	"errors"
	"os"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Runner runs the calls a server escalates, in the process readied for
// them (Start): outside the server's kernel layer.
type Runner struct {
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

// Run sends req to the supervisor, with the server's working directory and
// narrowing variables, and returns its result line and exit status.
func (e *Runner) Run(req wire.Request) ([]byte, int, error) {
	req.Dir, req.Env = e.dir, e.env
	rep, err := wire.Forward(e.broker, req)
	if err != nil {
		return nil, 0, err
	}
	if rep.Refused != "" {
		return nil, rep.Status, errors.New(rep.Refused)
	}
	return bytes.TrimSpace([]byte(rep.Stdout)), rep.Status, nil
}

// Start readies the place where the server's escalated calls run, or
// says why there is none. Inside a dsh-fs exec session (s.Session) it is
// the session's supervisor, reached by the channel lookupEnv names;
// otherwise an escalator the server starts now, before its first write
// restricts it, under a record of its policy. ask answers approval
// supervisor for the escalator.
func Start(lookupEnv func(string) (string, bool), s *config.Settings, ask func(wire.Ask) error) (*Runner, string) {
	p := s.Policy
	if s.Session != nil {
		v, _ := lookupEnv(wire.BrokerEnv)
		fd, err := wire.EnvFD(v)
		if err == nil {
			err = wire.CheckBroker(fd)
		}
		if err != nil {
			return nil, "no channel to the dsh-fs exec supervisor"
		}
		return &Runner{broker: fd, env: s.NarrowingEnv(), dir: p.Cwd, stop: func() {}}, ""
	}
	switch p.Approval {
	case policy.ApprovalNever:
		return nil, "approval is never"
	case policy.ApprovalTTY:
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
	xdg, _ := lookupEnv("XDG_RUNTIME_DIR")
	dir, err := wire.Dir(xdg, sandbox.RootPaths(roots))
	if err != nil {
		return nil, "no private folder for its record: " + err.Error()
	}
	mine, theirs, err := wire.NewBroker()
	if err != nil {
		wire.Remove(dir)
		return nil, err.Error()
	}
	asks, asksTheirs, err := supervisor.SocketPair()
	if err != nil {
		mine.Close()
		theirs.Close()
		wire.Remove(dir)
		return nil, err.Error()
	}
	// The record names the escalator as the session's supervisor: the
	// calls it runs trust an approver channel only from it
	// (wire.CheckApprover). So it is written once the escalator runs,
	// before the first call reaches it.
	record := wire.RecordPath(dir)
	c := supervisor.EscalatorCommand(self)
	c.Env = append(supervisor.WithoutSessionVars(os.Environ()), wire.Env+"="+record)
	// Never the MCP pipe: the escalator's own output is not the server's.
	c.Stdin, c.Stdout, c.Stderr = nil, nil, os.Stderr
	c.ExtraFiles = []*os.File{theirs, asksTheirs}
	err = c.Start()
	theirs.Close()
	asksTheirs.Close()
	if err == nil {
		rec := supervisor.NewRecord(s, roots)
		rec.Supervisor = c.Process.Pid
		rec.SupervisorPidNS, _ = wire.PidNamespace()
		rec.SupervisorStart, err = wire.StartTime(c.Process.Pid)
		if err == nil {
			_, err = wire.Write(dir, rec)
		}
		if err != nil {
			c.Process.Kill()
			c.Wait()
		}
	}
	if err != nil {
		mine.Close()
		asks.Close()
		wire.Remove(dir)
		return nil, "the escalator: " + err.Error()
	}
	go wire.AnswerAsks(asks, ask)
	stop := func() {
		mine.Close() // the escalator ends when its channel does
		c.Wait()
		asks.Close()
		wire.Remove(dir)
	}
	return &Runner{broker: int(mine.Fd()), dir: p.Cwd, stop: stop, own: true}, ""
}

// Stop ends the server's own escalator, once its calls are done, and
// removes its record; a session's supervisor is left running.
func (e *Runner) Stop() { e.stop() }

// Own says the escalator is the server's: approval supervisor then asks
// through the server (its client's user), not at a terminal.
func (e *Runner) Own() bool { return e.own }
