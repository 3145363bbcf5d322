package supervisor

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/netproxy"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// A session on macOS (docs/design.md §10): the supervisor runs CMD
// itself, under /usr/bin/sandbox-exec with the Seatbelt profile of the
// session's plan (seatbeltCommand), in a new session and process group
// of its own, with the session's pseudo-terminal as its controlling
// terminal. There is no child to apply a plan and no namespace: the
// profile is the whole fence, inherited by every process CMD starts. The
// rest is the supervisor's, as on Linux: the relay, the broker and its
// approval question, the proxy (served on a loopback port the profile
// alone lets the session reach), the git guard, the record and the
// audit log. Processes CMD leaves behind in its process group are killed
// when it ends; one that left the group outlives it (SeatbeltLayers).

// seatbeltStart says a session starts under Seatbelt.
const seatbeltStart = true

// shellBrokerFD is the descriptor CMD's shell holds the broker's channel
// at (wire.BrokerEnv): the first of its extra files.
const shellBrokerFD = 3

// launched is the session's CMD once readied (launch) and started
// (runCommand), and what it holds of the supervisor's.
type launched struct {
	// cmd is CMD under sandbox-exec, readied by launch, started by
	// runCommand.
	cmd *exec.Cmd
	// brokerEnd and shellEnd are the escalation channel's ends: the
	// supervisor's, and the shell's at shellBrokerFD.
	brokerEnd, shellEnd *os.File
	// proxy is the session's proxy's loopback listener under network:
	// allowlist, nil otherwise; stop ends the proxy.
	proxy net.Listener
	stop  func()
	// sigs are exec's signals, forwarded to CMD's process group.
	sigs chan os.Signal
	// sent says CMD was started, or never will be.
	sent bool
}

// forksChild is false: CMD is started by runCommand, nothing is forked
// at the launch.
func (l *launched) forksChild() bool { return false }

// launch readies the session's start: the broker's channel, the relay to
// the person's terminal (its pseudo-terminal made here), the proxy and
// the signals. mounts is false: there is no mount layer on macOS. beside
// runs at once: nothing here waits for a fork.
func (s *supervisor) launch(mounts bool, beside func()) error {
	l := &launched{stop: func() {}}
	s.launched = l
	var err error
	if l.brokerEnd, l.shellEnd, err = wire.NewBroker(); err != nil {
		return fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	l.cmd = &exec.Cmd{Dir: startDir(s.settings.Policy), Stdin: s.opts.Stdin, Stdout: s.opts.Stdout, Stderr: s.opts.Stderr,
		ExtraFiles: []*os.File{l.shellEnd}, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if s.relay, err = openRelay(s.opts, false); err != nil {
		return fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
	}
	if s.relay != nil {
		giveTerminal(l.cmd, s.relay.Slave())
	}
	s.relayStderr(l.cmd)
	if s.nested && wire.CheckBroker(shellBrokerFD) == nil {
		// The outer session's channel stays where the shell has it;
		// without one, the shell gets a channel nobody answers.
		l.cmd.ExtraFiles[0] = os.NewFile(shellBrokerFD, "broker")
	}
	if s.settings.Policy.Network == policy.NetworkAllowlist && seatbeltHeld(s.settings.Policy) && !s.nested {
		if err := s.serveProxy(l); err != nil {
			return fserr.Wrap(fserr.IO, "exec: network layer: "+err.Error(), err)
		}
	}
	l.sigs = make(chan os.Signal, 8)
	signal.Notify(l.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	if beside != nil {
		beside()
	}
	return nil
}

// serveProxy starts the session's proxy on a loopback port of its own,
// which the profile lets the session reach (plan.ProxyPort). A nested
// session has none: the outer profile lets it reach the outer proxy
// alone.
func (s *supervisor) serveProxy(l *launched) error {
	proxy, err := s.newProxy(l)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		proxy.Close()
		return err
	}
	l.proxy = ln
	go proxy.Serve(ln)
	l.stop = func() { ln.Close(); proxy.Close() }
	return nil
}

// sessionPeer is the proxy's peer on macOS, where there is no /proc to
// tell which program holds a connection: it never names one, so no
// network_allow_commands grant applies; the allow list does.
func sessionPeer(*launched) func(net.Conn) ([][]netproxy.FileID, error) {
	return func(net.Conn) ([][]netproxy.FileID, error) {
		return nil, fmt.Errorf("no program can be told apart on macOS")
	}
}

// sessionPlan is the plan of the session's layers with CMD at path and
// argv, as the profile is made from it (seatbeltCommand; seatbeltPlan).
func (s *supervisor) sessionPlan(path string, argv []string) (*plan.Plan, error) {
	l := s.launched
	port := 0
	if l.proxy != nil {
		port = l.proxy.Addr().(*net.TCPAddr).Port
	}
	pl, err := seatbeltPlan(s.settings.Policy, s.rec, s.dir, port, s.childEnv(), s.nested)
	if err != nil {
		return nil, err
	}
	pl.Path, pl.Argv, pl.Env = path, argv, append(pl.Env, "PWD="+l.cmd.Dir)
	return pl, nil
}

// recordedPlan is the plan of the session's layers as the record keeps
// it: without CMD and without the file view. nil before launch.
func (s *supervisor) recordedPlan() *plan.Plan {
	if s.launched == nil {
		return nil
	}
	return seatbeltLayersPlan(s.settings.Policy, s.rec)
}
