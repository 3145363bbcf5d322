package child

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// InitSignals are the signals a session's init passes on to the command:
// the ones dsh-fs exec forwards to its child, and SIGWINCH for a session
// without a terminal of its own (with one, the kernel sends it).
var InitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// Signals are the InitSignals Init passes on, caught since CatchSignals.
type Signals struct {
	c      chan os.Signal
	caught chan struct{}
}

// CatchSignals starts catching the InitSignals for Init, in the
// background: the runtime's first signal.Notify costs a millisecond or
// more (a thread of its own hands each signal's change over), which the
// session's first process spends beside its layers rather than before
// the command. A signal caught before the command runs is passed on to
// it once it does.
func CatchSignals() *Signals {
	s := &Signals{c: make(chan os.Signal, 8), caught: make(chan struct{})}
	go func() {
		defer close(s.caught)
		signal.Notify(s.c, InitSignals...)
	}()
	return s
}

// Init is the session's first process, pid 1 of its PID namespace, once
// it applied the session's layers: it starts the command (fds 0 to 3
// inherited, in a process group of its own, the foreground of the
// terminal at ctty when that is 0 to 2), reaps every process of the
// session, passes on the InitSignals it gets, and returns the command's
// exit status (128+N for signal N). started is called once the command
// runs, or with the error that kept it from running. Then it ends the
// rest of the session (endOthers); ended says none is left within
// endWait. It must run on the thread that applied the layers, and sigs,
// from CatchSignals, are caught before the command starts (nil: here).
func Init(path string, argv, env []string, ctty int, sigs *Signals, started func(error)) (int, bool) {
	// The kernel delivers to pid 1 only the signals it has a handler
	// for, so the session cannot kill it; and when pid 1 exits the kernel
	// kills every other process of the namespace, so nothing the session
	// started outlives the caller's exit, ended or not.
	if sigs == nil {
		sigs = CatchSignals()
	}
	<-sigs.caught
	attr := &syscall.SysProcAttr{Setpgid: true}
	if ctty >= 0 && ctty <= 2 {
		attr.Foreground, attr.Ctty = true, ctty
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2, 3}, Sys: attr})
	started(err)
	if err != nil {
		return 126, endOthers()
	}
	// The reaper waits on any thread; the signals are passed on from
	// this one. Landlock restricts only this thread (kernel.RestrictWrites),
	// whose domain the command inherited; its signal scope lets only
	// this thread, or one outside every domain, signal the command.
	ended := make(chan int, 1)
	go func() { ended <- reap(pid) }()
	for {
		select {
		case sig := <-sigs.c:
			syscall.Kill(pid, sig.(syscall.Signal))
		case status := <-ended:
			// From this thread, whose Landlock domain every process
			// of the session inherited: its signal scope allows it.
			return status, endOthers()
		}
	}
}

// endWait bounds endOthers: a process that SIGKILL does not end at once
// is stuck in the kernel, and the kernel's own end of the namespace
// waits for it instead.
const endWait = 2 * time.Second

// endOthers kills every process of the PID namespace but this one, its
// pid 1, and reaps them all: true once none is left, within endWait. Each
// is this process's descendant, or reparented to it as its parent ends;
// a fork racing the kill fails, as the kernel's own end of a namespace
// relies on too.
func endOthers() bool {
	unix.Kill(-1, unix.SIGKILL) // ESRCH: nothing left
	gone := make(chan bool, 1)
	go func() {
		for {
			_, err := unix.Wait4(-1, nil, 0, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				gone <- errors.Is(err, unix.ECHILD)
				return
			}
		}
	}()
	select {
	case ok := <-gone:
		return ok
	case <-time.After(endWait):
		return false
	}
}

// reap waits for every process of the session (orphans are pid 1's
// children) until the command, pid, ended, and returns its exit status.
func reap(pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// No child left: the command is gone without a status.
			return 1
		}
		if got != pid {
			continue // an orphan of the session, reaped
		}
		switch {
		case ws.Signaled():
			return 128 + int(ws.Signal())
		case ws.Exited():
			return ws.ExitStatus()
		}
	}
}
