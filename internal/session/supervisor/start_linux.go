package supervisor

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/wire"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// seatbeltStart says a session starts under Seatbelt (macOS): not on
// Linux, where the child applies the plan.
const seatbeltStart = false

// shellBrokerFD is the descriptor CMD's shell holds the broker's channel
// at (wire.BrokerEnv): the child's (child.BrokerFD).
const shellBrokerFD = child.BrokerFD

// runChild is the session's child (argExecChild, child.Run).
func runChild() int { return child.Run() }

// runCommand starts CMD at path with argv as the session's child and
// returns its exit status once it ends: the child launched early
// (launch), or now.
func (s *supervisor) runCommand(path string, argv []string) (int, error) {
	defer s.release()
	if s.launched == nil {
		if err := s.launch(s.rec.Shell.Mounts != nil, nil); err != nil {
			return 0, err
		}
	}
	l := s.launched
	brokerEnd := l.pipes.brokerEnd
	if err := s.sendSpec(s.spec(path, argv)); err != nil {
		return 0, err
	}
	mark("child-started")
	s.saveIndexes()
	if err := s.startRelay(l); err != nil {
		l.signal(syscall.SIGKILL)
		s.waitSession(l)
		brokerEnd.Close()
		return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
	}
	done := make(chan struct{})
	forwarding := s.forwardSignals(l.sigs, l, done)
	stopBroker := func() { brokerEnd.Close() }
	if !s.nested {
		stopBroker = wire.Serve(brokerEnd, withMemory(s.runAudited))
	}
	status, waited := s.waitSession(l)
	mark("child-ended")
	// The forwarder is gone before the relay closes: a resize in flight
	// would use the session's terminal as it is closed.
	close(done)
	<-forwarding
	stopBroker()
	if s.relay != nil {
		// CMD ended: what it wrote last reaches the person, and a
		// process left behind holding the session's terminal gets a
		// hang-up, never the person's terminal.
		s.relay.Close()
	}
	s.endExplaining()
	// What the session wrote in its caches goes while the git guard
	// looks, once the child is gone with the mount namespace its
	// overlays are mounted in: a layer exists only with the PID
	// namespace, whose every process ended with CMD. The record and the
	// placeholders go after the caches, in the order the lock needs,
	// while the guard looks too (endRecord), and the kernel may still
	// tear the child's namespaces down: no process of the session is
	// left, and a file or folder that is a mount point in another mount
	// namespace is removed all the same (the kernel detaches the mount).
	// close waits for the child last.
	s.childGone = waited
	cachesGone := make(chan struct{})
	go func() {
		defer close(cachesGone)
		// Upper folders in a tmpfs go with the session's namespace; its
		// empty folder goes with the record's.
		if m := s.rec.Shell.Mounts; m != nil && m.OverlayDir != "" && m.OverlayMemory == 0 {
			<-waited
			layout.RemoveTree(m.OverlayDir)
		}
	}()
	s.endRecord(cachesGone)
	s.endGitGuard()
	<-cachesGone
	mark("git-guard-end")
	return status, nil
}

// waitSession waits for the end of l's session and returns CMD's exit
// status, and a channel closed once the session's process the
// supervisor started is waited for. The session's init reports that
// CMD and every other process of the session ended before its own exit
// (rawinit's Wait; the child passes it on, on l.ended), whose teardown
// of the session's namespaces the kernel does after: the end of the
// session (the git guard) overlaps it. Without that report (no PID
// namespace, a process killed, a process that outlasted the kill), the
// exit says the session ended: the kernel ended every process of its
// namespace before.
func (s *supervisor) waitSession(l *launched) (int, <-chan struct{}) {
	if l.inThread {
		e := <-l.threadEnded
		return e.status, l.threadGone
	}
	waited := make(chan struct{})
	var err error
	go func() {
		err = l.child.Wait()
		close(waited)
	}()
	if l.ended != nil {
		report, _ := io.ReadAll(l.ended) // EOF once the child reported, or exited
		if status, perr := strconv.Atoi(string(report)); perr == nil {
			return status, waited
		}
	}
	<-waited
	return exitStatusOf(l.child.ProcessState, err), waited
}

// childPipes are the channels between the supervisor and the child: the
// broker's two ends, the pipe the child reads its spec from, and the one
// it reports why it could not become CMD on.
type childPipes struct {
	brokerEnd, shellEnd *os.File
	specR, specW        *os.File
	errR, errW          *os.File
}

// newChildPipes makes the child's channels.
func newChildPipes() (childPipes, error) {
	var p childPipes
	var err error
	if p.brokerEnd, p.shellEnd, err = wire.NewBroker(); err != nil {
		return p, err
	}
	if p.specR, p.specW, err = os.Pipe(); err != nil {
		return p, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		return p, err
	}
	return p, nil
}

// childCommand is the session's child, dsh-fs re-run as argExecChild,
// with exec's streams and the child's ends of pipes.
func (s *supervisor) childCommand(pipes childPipes) *exec.Cmd {
	a := s.opts
	child := selfCommand(s.self, argExecChild)
	// CMD starts in the session's workspace root, so that its relative
	// paths, the shell's and every dsh-fs call's, are the workspace's
	// (docs/design.md §10).
	child.Dir = startDir(s.settings.Policy)
	// The child's own environment; CMD's comes in the spec, once the
	// record and the caches are known (childEnv).
	env := WithoutSessionVars(os.Environ())
	if s.nested {
		env = s.childEnv()
	}
	child.Env = append(env, "PWD="+child.Dir)
	child.Stdin, child.Stdout, child.Stderr = a.Stdin, a.Stdout, a.Stderr
	child.ExtraFiles = []*os.File{pipes.shellEnd, pipes.specR, pipes.errW}
	// CMD never holds the person's terminal: the child starts a new
	// session, without a controlling terminal, and the streams that
	// were a terminal are a pseudo-terminal of its own instead.
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return child
}

// giveChildTerminal opens the relay (s.relay) when exec's streams hold a
// terminal, and gives the child the session's terminal in their place:
// ctty is the child's stream that becomes its controlling terminal (-1
// for none). In the session's PID namespace, whose devpts is its own,
// the child makes the session's terminal there, so it has a name inside:
// terminal then tells it how, and handover is the supervisor's end of
// the channel the child hands the terminal back on. Elsewhere the
// supervisor makes it here. The caller closes s.relay and handover,
// error or not.
func (s *supervisor) giveChildTerminal(child *exec.Cmd, inThread bool) (ctty int, terminal *plan.Terminal, handover *os.File, err error) {
	ownTerminal := s.rec.Shell.ProcessesHeld
	ctty = -1
	if s.relay, err = openRelay(s.opts, ownTerminal); err != nil {
		return ctty, nil, nil, err
	}
	if s.relay == nil {
		return ctty, nil, nil, nil
	}
	streams := giveTerminal(child, s.relay.Slave())
	if len(streams) > 0 {
		ctty = streams[0]
	}
	if ownTerminal && len(streams) > 0 {
		terminal = &plan.Terminal{Streams: streams, Modes: s.relay.Modes()}
		if inThread {
			return ctty, terminal, nil, nil // made on the thread
		}
		var childEnd *os.File
		if handover, childEnd, err = tty.NewHandover(); err != nil {
			return ctty, nil, nil, err
		}
		child.ExtraFiles = append(child.ExtraFiles, childEnd)
		terminal.FD = 2 + len(child.ExtraFiles)
	}
	return ctty, terminal, handover, nil
}

// startRelay starts relaying between the person's terminal and the
// session's, once l's session runs: with the terminal the thread made,
// or the child handed back, when the session made it.
func (s *supervisor) startRelay(l *launched) error {
	if l.master != nil {
		s.relay.Attach(l.master)
		l.master = nil
	}
	if l.handover != nil {
		master, err := tty.ReceiveTerminal(l.handover)
		if err != nil {
			return err
		}
		s.relay.Attach(master)
	}
	s.startExplaining()
	if s.relay != nil {
		return s.relay.Start()
	}
	return nil
}

// mountNamespace starts a child in a private mount namespace: as root
// directly; otherwise inside a new user namespace that maps this user,
// and only it, to itself (layout.UserNamespace).
//
// A probe started so is also pid 1 of a new PID namespace, as the
// session's first process is (child.Start).
func mountNamespace() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Cloneflags: syscall.CLONE_NEWPID}
	if layout.UserNamespace() {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// A user that is not root loses its capabilities in the new
		// namespace at its execve of dsh-fs: CAP_SYS_ADMIN is kept as an
		// ambient capability for the mounts, and the child clears it
		// before CMD (child.Run, rawinit's privileges).
		// CAP_SETPCAP lets it empty the bounding set and lock the
		// securebits before CMD.
		// CAP_DAC_OVERRIDE is what an overlay's mount needs of its
		// mounter, whose credentials it keeps for its own work (its
		// work folder is mode 0); in a namespace that maps this user
		// alone it overrides nothing but on this user's own files.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
	}
	return attr
}
