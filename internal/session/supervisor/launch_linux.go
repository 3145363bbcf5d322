package supervisor

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// launched is the session's child, started and waiting for its spec:
// what it holds of the supervisor's (channels, terminal, network) and
// the signals the supervisor forwards to it.
type launched struct {
	child    *exec.Cmd
	pipes    childPipes
	ctty     int
	terminal *plan.Terminal
	handover *os.File
	proxyFD  int
	stop     func() // ends the network layer's proxies
	// sigs are exec's signals, caught once notified is closed
	// (catchSignals).
	sigs     chan os.Signal
	notified chan struct{}
	// ended is the supervisor's end of the pipe the child reports the
	// session's end on, as its first process tells it (waitSession), at
	// the child's descriptor endedFD; nil without a child or a PID
	// namespace.
	ended   *os.File
	endedFD int
	sent    bool // the spec was sent (sendSpec), or the child is gone
	// inThread says the session starts from a thread of the supervisor
	// (startInThread), not from the child, which then only describes
	// the first process's streams, descriptors and namespaces. first is
	// its first process once started, master its terminal's master
	// where the thread made one; threadEnded tells how it ended, and
	// threadGone is closed once its first process is reaped.
	inThread bool
	// userNamespace says the first process takes a user namespace of
	// its own as it is forked (ownUserNamespace); mounts are then its
	// mount layer, compiled (compileMounts).
	userNamespace bool
	mounts        []rawinit.Op
	// thread is the thread the session starts from, readied by the
	// launch (newSessionThread); nil before.
	thread      *sessionThread
	first       *rawinit.Process
	master      *os.File
	threadEnded chan threadEnd
	threadGone  chan struct{}
}

// launch readies the session's start: its streams, channels, terminal
// and network, which follow from the layers decided by then (mounts,
// s.rec.Shell's ProcessesHeld and NetworkNamespaced). A session started
// from the supervisor's thread starts with its plan (sendSpec); where the
// child starts it, the child is started now and waits for its plan, so
// its own start overlaps the rest of the supervisor's work. beside, when not nil, is called just before the
// fork, to run beside it. A planned mount layer brings the namespaces
// even when it mounts nothing (processesLayer). s.release releases what
// launch readied, error or not.
func (s *supervisor) launch(mounts bool, beside func()) error {
	pipes, err := newChildPipes()
	if err != nil {
		return fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	l := &launched{pipes: pipes, ctty: -1, stop: func() {}, inThread: inThread(mounts)}
	l.userNamespace = l.inThread && ownUserNamespace(mounts)
	s.launched = l
	l.child = s.childCommand(pipes)
	// An ordinary user's session is readied for the child too, which
	// starts it where its mount layer cannot be compiled (sendSpec).
	childToo := !l.inThread || l.userNamespace
	if l.ctty, l.terminal, l.handover, err = s.giveChildTerminal(l.child, !childToo); err != nil {
		l.closeAll()
		return fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
	}
	s.relayStderr(l.child)
	if s.nested && wire.CheckBroker(child.BrokerFD) == nil {
		// The outer session's channel stays where the shell has it;
		// without one, the shell gets a channel nobody answers.
		l.child.ExtraFiles[0] = os.NewFile(child.BrokerFD, "broker")
	}
	mark("terminal")
	if mounts {
		c := l.child.SysProcAttr
		ns := mountNamespace()
		// The session's PID namespace is its first process's
		// (child.Start), which the child forks.
		ns.Cloneflags &^= syscall.CLONE_NEWPID
		ns.Setsid, ns.Setctty, ns.Ctty = c.Setsid, c.Setctty, c.Ctty
		l.child.SysProcAttr = ns
	}
	if err := s.readyNetwork(l); err != nil {
		l.closeAll()
		return fserr.Wrap(fserr.IO, "exec: network layer: "+err.Error(), err)
	}
	if mounts && childToo {
		r, w, err := os.Pipe()
		if err != nil {
			l.closeAll()
			return fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
		}
		l.child.ExtraFiles = append(l.child.ExtraFiles, w)
		l.ended, l.endedFD = r, 2+len(l.child.ExtraFiles)
	}
	l.catchSignals()
	// The session dies with the supervisor (Run).
	l.child.SysProcAttr.Pdeathsig = syscall.SIGKILL
	mark("network-ready")
	if beside != nil {
		beside()
	}
	if l.inThread {
		// The session's namespaces are taken, or its first process
		// forked with its own (firstAhead), on its thread beside the
		// plan, once that is under way: a network namespace's making
		// alone is about half a millisecond here, a fork with a user
		// namespace about two.
		l.thread = newSessionThread(l, firstAhead(l.userNamespace, s.rec.Shell.ProcessesHeld, s.rec.Shell.NetworkNamespaced))
	}
	return s.startChild(l)
}

// forksChild says whether the launch forks the session's child now
// (startChild), beside which the plan runs; a session started from the
// supervisor's thread forks nothing before its spec.
func (l *launched) forksChild() bool { return !l.inThread }

// catchSignals catches exec's signals for l's session, to be forwarded
// from CMD's start: one that arrives while CMD runs is CMD's to act on
// (forwardSignals). The runtime's first signal.Notify costs a
// millisecond or more (a thread of its own hands each signal's change
// over), so it runs beside the child's launch; sendSpec waits for it
// before CMD can start. Until then a signal acts as it does before the
// launch: it ends exec, and with it the child (Pdeathsig), which has
// started no CMD.
func (l *launched) catchSignals() {
	l.sigs, l.notified = make(chan os.Signal, 8), make(chan struct{})
	go func() {
		defer close(l.notified)
		signal.Notify(l.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
			syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	}()
}

// readyNetwork readies the session's network layer in l's child: the
// network namespace, and the proxy of an allowlist.
func (s *supervisor) readyNetwork(l *launched) error {
	if !s.rec.Shell.NetworkNamespaced {
		return nil
	}
	withNetworkNamespace(l.child.SysProcAttr)
	if s.settings.Policy.Network == policy.NetworkAllowlist && s.rec.Shell.ProcessesHeld {
		fd, stop, err := s.startProxy(l)
		if err != nil {
			return err
		}
		l.proxyFD, l.stop = fd, stop
	}
	return nil
}

// spec is what the child is told to do: its layers (layers), CMD (path,
// argv) to become, and CMD's environment.
func (s *supervisor) spec(path string, argv []string) plan.Plan {
	env := s.childEnv()
	if s.rec.Shell.NetworkNamespaced {
		env = bridge.WithoutProxyVars(env) // exec's proxy is the supervisor's alone
	}
	spec := s.layers()
	spec.Path, spec.Argv, spec.Env = path, argv, append(env, "PWD="+s.launched.child.Dir)
	return spec
}

// layers is the plan of the session's layers, as the child will apply
// them, from the record's layers and the launched child's descriptors:
// everything of the plan but CMD.
func (s *supervisor) layers() plan.Plan {
	l := s.launched
	spec := plan.Plan{RestrictWrites: s.rec.Shell.Landlock > 0, Writable: s.rec.Roots, Sockets: s.sockets,
		Caches:       writableCaches(s.rec.Shell.Caches),
		Unprivileged: s.rec.Shell.Privileges != wire.PrivilegesKept, Ctty: l.ctty, Terminal: l.terminal,
		Linux: plan.Linux{IoUring: s.settings.Policy.AllowIoUring}, Init: s.rec.Shell.ProcessesHeld,
		Network: s.rec.Shell.NetworkNamespaced, ProxyFD: l.proxyFD, EndedFD: l.endedFD}
	if m := s.rec.Shell.Mounts; m != nil {
		spec.Files, spec.EmptyFile = &m.Files, s.empty
	}
	return spec
}

// recordedPlan is the plan the child will apply as the record keeps it
// (wire.Shell.Plan): its layers without CMD, and without the file view,
// which the record holds once, as the mount layer's (Shell.Mounts, whose
// plan.Files the child applies). nil before the child is launched.
func (s *supervisor) recordedPlan() *plan.Plan {
	if s.launched == nil {
		return nil
	}
	p := s.layers()
	p.Files = nil
	return &p
}

// startChild starts l's child. It closes the pipes' ends the child
// holds now; on a failure, every one.
func (s *supervisor) startChild(l *launched) error {
	if l.inThread {
		return nil // started with its spec (startInThread)
	}
	cmd, pipes := l.child, l.pipes
	err := cmd.Start()
	s.childFailed = err != nil
	if s.relay != nil && s.relay.Slave() != nil {
		// The child holds the session's terminal now; only its
		// processes may, so the relay sees the session end.
		s.relay.Slave().Close()
	}
	pipes.shellEnd.Close()
	pipes.specR.Close()
	pipes.errW.Close()
	for _, f := range cmd.ExtraFiles[child.ErrorFD-2:] {
		f.Close() // the proxy channel's bridge end is the session's alone
	}
	if err != nil {
		l.sent = true
		pipes.brokerEnd.Close()
		pipes.specW.Close()
		pipes.errR.Close()
		return fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	return nil
}

// sendSpec hands the launched child spec and waits for it to become CMD.
// On a failure it closes the broker's end, and the error says why no CMD
// runs: the one the child reported before its exec of CMD.
func (s *supervisor) sendSpec(spec plan.Plan) error {
	l := s.launched
	l.sent = true
	<-l.notified // CMD's signals are forwarded from its start
	if l.inThread && l.userNamespace {
		var ok bool
		if l.mounts, ok = compileMounts(spec, l.child.Dir); !ok {
			// More than the compiled mounts hold: the child makes them.
			l.inThread, l.userNamespace = false, false
			if err := s.startChild(l); err != nil {
				return err
			}
		}
	}
	if l.inThread {
		return s.startInThread(spec)
	}
	json.NewEncoder(l.pipes.specW).Encode(spec)
	l.pipes.specW.Close()
	// The child's error pipe closes on its exec of CMD: anything read
	// before that is why the child could not become CMD.
	report, _ := io.ReadAll(l.pipes.errR)
	l.pipes.errR.Close()
	if len(report) > 0 {
		s.childFailed = true
		l.pipes.brokerEnd.Close()
		l.child.Wait()
		var f child.Failure
		if json.Unmarshal(report, &f) != nil || f.Code == "" {
			f = child.Failure{Code: fserr.IO, Message: strings.TrimSpace(string(report))}
		}
		return fserr.New(f.Code, "exec: "+f.Message)
	}
	return nil
}

// abortChild ends a launched child that was never sent its spec: told
// nothing, it ends without starting CMD.
func (s *supervisor) abortChild() {
	l := s.launched
	if l == nil || l.sent {
		return
	}
	if l.inThread {
		l.closeAll()
		return
	}
	l.sent = true
	l.pipes.specW.Close()
	io.Copy(io.Discard, l.pipes.errR)
	l.pipes.errR.Close()
	l.pipes.brokerEnd.Close()
	l.child.Wait()
}

// closeAll closes every end of l's pipes and the child's ends of its
// other channels, for a child never started.
func (l *launched) closeAll() {
	if l.thread != nil {
		l.thread.release()
	}
	l.closeSessionEnds()
	l.pipes.brokerEnd.Close()
}

// closeSessionEnds closes every end of l's pipes but the broker's, and
// the child's ends of its other channels: once a session started from
// the supervisor's thread holds its own copies.
func (l *launched) closeSessionEnds() {
	l.sent = true
	p := l.pipes
	for _, f := range []*os.File{p.shellEnd, p.specR, p.specW, p.errR, p.errW} {
		f.Close()
	}
	for _, f := range l.child.ExtraFiles[child.ErrorFD-2:] {
		f.Close()
	}
}

// release releases what launch readied: the relay, the terminal's
// handover channel, the network's proxies and the signals' forwarding.
// It may be called again.
func (s *supervisor) release() {
	if s.relay != nil {
		s.relay.Close()
	}
	s.endExplaining()
	l := s.launched
	if l == nil {
		return
	}
	if l.handover != nil {
		l.handover.Close()
		l.handover = nil
	}
	if l.master != nil { // never attached to the relay
		l.master.Close()
		l.master = nil
	}
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
	if l.ended != nil {
		l.ended.Close()
		l.ended = nil
	}
	if l.sigs != nil && s.signalsStopped == nil {
		// Exec's signals act as they did before the launch once the
		// runtime has handed each one's change to its signal thread and
		// back (signal.Stop), about a millisecond for the seven here:
		// beside the rest of the end, which close waits for it after.
		// A signal that arrives meanwhile is caught and dropped, as one
		// is while the git guard checks.
		sigs, notified, stopped := l.sigs, l.notified, make(chan struct{})
		s.signalsStopped = stopped
		go func() {
			defer close(stopped)
			<-notified
			signal.Stop(sigs)
		}()
	}
}
