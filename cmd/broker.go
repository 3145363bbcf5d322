package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
	"github.com/dshfs/dsh-fs/pkg/session"
)

// Brokered escalation (docs/design.md §10): inside a dsh-fs exec session
// the kernel layer refuses a write outside the writable roots whatever a
// call decides, so a call that asks to escalate does not try: it sends
// itself, its arguments, directory, DSH_FS_* variables and standard
// streams, to the supervisor over the socket the session inherited. The
// supervisor runs exactly that call outside the kernel layer under the
// pinned policy, where the trusted approval decides, and the call's
// result is written to the caller's own stdout.

// escalatingOps are the operations a supervisor runs for a session: the
// only ones --escalate can lift.
var escalatingOps = []string{"write", "edit"}

// brokerEscalation decides what a call of op that asks to escalate does
// inside an exec session: the call the supervisor runs asks the
// supervisor through the channel it was given (approval supervisor);
// any other call is forwarded. It returns the forwarded call's exit
// status as an exitWith, a denial when there is no channel, or nil to run
// the call here.
func (a *App) brokerEscalation(op string, s *config.Settings, fence *sandbox.Fence) error {
	if s.Session == nil || !slices.Contains(escalatingOps, op) {
		return nil
	}
	if v, _ := a.LookupEnv(session.BrokeredEnv); v == "1" {
		// Only a channel to the record's supervisor answers for it: the
		// variables say nothing a caller could not say itself.
		if fdText, ok := a.LookupEnv(session.ApproverEnv); ok {
			if fd, err := session.EnvFD(fdText); err == nil && session.CheckApprover(fd, s.Session) == nil {
				fence.SetSupervisor(func(req sandbox.EscalationRequest) error {
					return session.AskSupervisor(fd, session.Ask{Request: req, DiffText: req.DiffText})
				})
			}
		}
		return nil
	}
	return a.forward(op, s)
}

// forward sends this call to the session's supervisor and returns its
// exit status. A missing or closed channel is a denial, never a run of
// the call here, where the kernel would refuse it anyway.
func (a *App) forward(op string, s *config.Settings) error {
	refuse := func(why string) error {
		return &sandbox.DeniedError{Op: op, Path: a.current.Path, Mode: s.Policy.Mode, Reason: sandbox.ReasonNotApproved,
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
	stdio, ok := a.stdioFiles()
	if !ok {
		return refuse("this call's streams cannot be handed to the supervisor")
	}
	wd, err := os.Getwd()
	if err != nil {
		return refuse("no working directory: " + err.Error())
	}
	var env []string
	for name := range settingVariables() {
		if val, ok := a.LookupEnv(name); ok {
			env = append(env, name+"="+val)
		}
	}
	rep, err := session.Forward(fd, session.Request{Args: a.args, Dir: wd, Env: env}, stdio)
	if err != nil {
		return refuse("no channel to the dsh-fs exec supervisor: " + err.Error())
	}
	if rep.Refused != "" {
		return refuse(rep.Refused)
	}
	return exitWith(rep.Status)
}

func (a *App) stdioFiles() ([3]*os.File, bool) {
	in, ok1 := a.Stdin.(*os.File)
	out, ok2 := a.Stdout.(*os.File)
	errf, ok3 := a.Stderr.(*os.File)
	return [3]*os.File{in, out, errf}, ok1 && ok2 && ok3
}

// callRunner runs the calls a session forwards, for the exec supervisor
// and for dsh-fs mcp's escalator alike.
type callRunner struct {
	self   string // this executable
	record string // the record the calls run under
	// ask answers approval supervisor: the person at exec's terminal, or
	// the MCP client's user.
	ask func(session.Ask) error
}

// run runs one call a session forwarded: only write or edit with
// --escalate, as this executable, outside the kernel layer, under the
// pinned record, with the caller's session variables (they may only
// narrow) and streams. Approval supervisor is put to r.ask.
func (r *callRunner) run(req session.Request, stdio [3]*os.File) session.Reply {
	if why := checkForwarded(req.Args); why != "" {
		return session.Reply{Status: ExitUsage, Refused: why}
	}
	mine, theirs, err := socketPair()
	if err != nil {
		return session.Reply{Status: ExitFailed, Refused: "the supervisor cannot run it: " + err.Error()}
	}
	defer mine.Close()
	c := exec.Command(r.self, req.Args...)
	c.Args[0] = "dsh-fs"
	env := withoutSessionVars(os.Environ())
	for _, kv := range req.Env {
		name, _, _ := strings.Cut(kv, "=")
		if settingVariables()[name] {
			env = append(env, kv)
		}
	}
	c.Env = append(env, session.Env+"="+r.record, session.BrokeredEnv+"=1", fmt.Sprintf("%s=%d", session.ApproverEnv, 3))
	c.Dir = req.Dir
	c.Stdin, c.Stdout, c.Stderr = stdio[0], stdio[1], stdio[2]
	c.ExtraFiles = []*os.File{theirs}
	err = c.Start()
	theirs.Close()
	if err != nil {
		return session.Reply{Status: ExitFailed, Refused: "the supervisor cannot run it: " + err.Error()}
	}
	go session.AnswerAsks(mine, r.ask)
	err = c.Wait()
	return session.Reply{Status: exitStatusOf(c.ProcessState, err)}
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
			return sandbox.AskOnTerminal(in, out, req)
		}
	}
	return sandbox.AskAtTerminal(req)
}

// checkForwarded says why the supervisor will not run args, or "": the
// command must be write or edit, and the call must ask to escalate.
func checkForwarded(args []string) string {
	root := NewCmdRoot(&App{})
	c, _, err := root.Find(args)
	if err != nil || !slices.Contains(escalatingOps, c.Name()) || c.Parent() != root {
		return "the supervisor runs only write and edit calls that ask to escalate"
	}
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--"+config.FlagEscalate || strings.HasPrefix(arg, "--"+config.FlagEscalate+"=") {
			return ""
		}
	}
	return "the supervisor runs only write and edit calls that ask to escalate"
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
