package supervisor

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// runCommand runs CMD at path with argv under the session's profile and
// returns its exit status once it ends: the relay, the broker and the
// signals' forwarding run while it does; when it ends, what is left of
// its process group is killed, and the git guard looks.
func (s *supervisor) runCommand(path string, argv []string) (int, error) {
	defer s.release()
	if s.launched == nil {
		if err := s.launch(false, nil); err != nil {
			return 0, err
		}
	}
	l := s.launched
	pl, err := s.sessionPlan(path, argv)
	if err != nil {
		return 0, err
	}
	l.cmd.Path, l.cmd.Args, l.cmd.Env = path, argv, pl.Env
	// A nested session runs under the outer one's profile, which no
	// process can lift or apply again (sandbox_apply fails): it narrows
	// the record alone, as on Linux.
	if seatbeltHeld(s.settings.Policy) && !s.nested {
		if l.cmd.Path, l.cmd.Args, err = seatbeltCommand(pl); err != nil {
			s.abortChild()
			return 0, err
		}
	}
	l.sent = true
	err = l.cmd.Start()
	// CMD holds the session's terminal and the shell's end now; only
	// its processes may, so the relay and the broker see it end.
	if s.relay != nil && s.relay.Slave() != nil {
		s.relay.Slave().Close()
	}
	l.shellEnd.Close()
	if err != nil {
		s.childFailed = true
		l.brokerEnd.Close()
		return 0, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	mark("child-started")
	s.saveIndexes()
	if err := s.startRelay(l); err != nil {
		l.killGroup()
		l.cmd.Wait()
		l.brokerEnd.Close()
		return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
	}
	done := make(chan struct{})
	forwarding := s.forwardSignals(l.sigs, l, done)
	stopBroker := func() { l.brokerEnd.Close() }
	if !s.nested {
		stopBroker = wire.Serve(l.brokerEnd, withMemory(s.runAudited))
	}
	err = l.cmd.Wait()
	status := exitStatusOf(l.cmd.ProcessState, err)
	// No PID namespace: what CMD left in its process group goes with it.
	l.killGroup()
	mark("child-ended")
	close(done)
	<-forwarding
	stopBroker()
	if s.relay != nil {
		s.relay.Close()
	}
	s.endExplaining()
	s.endGitGuard()
	return status, nil
}

// startRelay starts relaying between the person's terminal and the
// session's, made here (launch).
func (s *supervisor) startRelay(*launched) error {
	s.startExplaining()
	if s.relay != nil {
		return s.relay.Start()
	}
	return nil
}

// killGroup kills CMD's process group, which CMD leads (Setsid): every
// process of the session that stayed in it.
func (l *launched) killGroup() {
	if l.cmd.Process != nil {
		syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// signal passes sig on to the session: to CMD's process group, as a
// terminal's ^C reaches the foreground one.
func (l *launched) signal(sig os.Signal) {
	if l.cmd.Process != nil {
		syscall.Kill(-l.cmd.Process.Pid, sig.(syscall.Signal))
	}
}

// firstPid is CMD's process (sandbox-exec becomes CMD), 0 before it runs.
func (l *launched) firstPid() int { return l.pid() }

// pid is CMD's process, 0 before it runs.
func (l *launched) pid() int {
	if l.cmd.Process != nil {
		return l.cmd.Process.Pid
	}
	return 0
}

// abortChild releases a CMD readied and never started: there is nothing
// to tell, as no process was made.
func (s *supervisor) abortChild() {
	l := s.launched
	if l == nil || l.sent {
		return
	}
	l.sent = true
	l.shellEnd.Close()
	l.brokerEnd.Close()
}

// release releases what launch readied: the relay, the proxy and the
// signals' forwarding. It may be called again.
func (s *supervisor) release() {
	if s.relay != nil {
		s.relay.Close()
	}
	s.endExplaining()
	l := s.launched
	if l == nil {
		return
	}
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
	if l.sigs != nil {
		signal.Stop(l.sigs)
		l.sigs = nil
	}
}
