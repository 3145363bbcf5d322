// Package rawinit starts a session's first process with no second Go
// program: everything it needs is readied in Go before one fork, and the
// child makes only raw system calls on that memory. It places its
// descriptors, takes a terminal, installs the kernel layers it is given
// (Landlock rulesets, dropped privileges, seccomp filters) on itself, and
// either executes CMD or, as pid 1 of a new PID namespace, starts CMD,
// passes signals on to it, reaps every process and ends the rest when
// CMD ends. It knows no policy: what the layers hold is the caller's.
package rawinit

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Spec is all the session's first process needs; Start readies it in Go
// and forks.
type Spec struct {
	// Clone are the namespaces the fork makes besides the PID one
	// (CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWNET for a caller that is not
	// root): with CLONE_NEWUSER, Start maps the caller's own uid and gid
	// each to itself, setgroups "deny", before the child goes on.
	Clone uintptr
	// Init makes the first process pid 1 of a new PID namespace, which
	// starts CMD and stays its init; MountProc (Init only) mounts that
	// namespace's /proc over /proc (nosuid, nodev, noexec). Without Init
	// the first process executes CMD itself.
	Init, MountProc bool
	// Session makes the first process a session leader (setsid). Ctty,
	// when not -1, is a descriptor of the first process (Files placed)
	// that becomes its controlling terminal, never taken from another
	// session; with Init, CMD, in a process group of its own, is made
	// its foreground.
	Session bool
	Ctty    int
	// ParentDeath, when not 0, is sent to the first process when the
	// thread that forked it (Start, Fork) ends (the runtime never ends
	// the main thread): the caller keeps that thread for the session's
	// life.
	ParentDeath syscall.Signal
	Layers      Layers
	// Path, Argv and Env are CMD's execve (Env nil: empty); Dir, when not
	// "", is where the first process and CMD run.
	Path      string
	Argv, Env []string
	Dir       string
	// Files are the caller's descriptors the first process has as 0, 1,
	// …: -1 leaves that one closed, as do missing ones up to 2. Every
	// other descriptor is closed at CMD's execve (close-on-exec) and, in
	// an init, before CMD starts; the init closes Files at the end.
	// FromReg(i) in place of a descriptor is the one the ops left in
	// register i (a terminal's slave they opened), kept open for it.
	Files []int
	// Ops run first, once the first process is handed its spec, a new
	// user namespace's maps written (ops.go).
	Ops []Op
}

// Layers are kernel layers readied in Go before the fork that the first
// process installs on itself, in the order of the fields, with plain
// system calls; CMD and everything it starts inherit them.
type Layers struct {
	// JoinKeyring joins a new anonymous session keyring; a kernel
	// without keyrings (ENOSYS) or a filter refusing keyctl (EPERM) is
	// not a failure: no keyring is shared either way.
	JoinKeyring bool
	// Rulesets are Landlock ruleset descriptors of the caller, none of
	// 0 to len(Files)-1: no_new_privs, then landlock_restrict_self of
	// each in order.
	Rulesets []int
	// DropPrivileges, when not nil, drops every capability (Privileges).
	DropPrivileges *Privileges
	// Filters are seccomp programs installed in order, last, after
	// no_new_privs. An init runs under them too: they must let it
	// close_range, clone, rt_sigtimedwait, wait4, kill, clock_gettime,
	// write and exit, and CMD setpgid, ioctl(TIOCSPGRP) and execve.
	Filters [][]unix.SockFilter
}

// Privileges says how to drop them: the bounding set is emptied up to
// LastCap (where EPERM stops it, it stays and securebits are left), the
// securebits locked so uid 0 gains nothing at an execve, the ambient set
// cleared, every capability set emptied (capset) and no_new_privs set.
// LastCap is the kernel's /proc/sys/kernel/cap_last_cap.
type Privileges struct {
	LastCap int
}

// FromReg is a Files entry naming the descriptor the ops left in
// register i, rather than one of the caller's.
func FromReg(i int) int { return -2 - i }

// Process is a first process Start forked, with CMD running; its Wait
// is to be called, which closes the init's report of the end.
type Process struct {
	pid   int
	init  bool
	ended *os.File // the init's report of the session's end; nil without Init

	mu     sync.Mutex // held while reaping, so Signal never reaches a reused pid
	reaped bool
	ws     syscall.WaitStatus
	done   chan struct{}

	once     sync.Once
	status   int
	endedAll bool
	waitErr  error
}

// Start forks s's first process from the calling thread (Fork), whose
// namespaces, root, working folder and Landlock domain the child
// inherits (the caller locks the thread where those are its own), and
// hands it s (Pending.Start). It returns once CMD was executed, or the
// error that kept it from running (fserr.IO, naming the step), leaving
// no process behind.
func Start(s Spec) (*Process, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	p, err := Fork(s.early())
	if err != nil {
		return nil, err
	}
	return p.Start(s)
}

// check refuses a spec whose parts contradict each other.
func (s Spec) check() error {
	switch {
	case len(s.Argv) == 0 || s.Path == "":
		return fserr.New(fserr.InvalidArgument, "rawinit: no command")
	case s.MountProc && !s.Init:
		return fserr.New(fserr.InvalidArgument, "rawinit: a /proc of its own needs a PID namespace (Init)")
	case s.Ctty >= 0 && (!s.Session || s.Ctty >= len(s.Files)):
		return fserr.New(fserr.InvalidArgument, "rawinit: a controlling terminal needs a session and one of Files")
	case s.Ctty < -1:
		return fserr.New(fserr.InvalidArgument, "rawinit: Ctty is -1 or a descriptor")
	case slices.ContainsFunc(s.Layers.Rulesets, func(fd int) bool { return fd < len(s.Files) }):
		return fserr.New(fserr.InvalidArgument, "rawinit: a ruleset's descriptor is one Files replaces")
	case slices.ContainsFunc(s.Files, func(fd int) bool { return fd < -1 && (-2-fd >= MaxRegisters || len(s.Ops) == 0) }):
		return fserr.New(fserr.InvalidArgument, "rawinit: a file from a register of no op")
	case s.Clone&(unix.CLONE_NEWPID|unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_VFORK|unix.CLONE_FILES) != 0:
		return fserr.New(fserr.InvalidArgument, "rawinit: Clone names namespaces only, and not the PID one (Init)")
	}
	return nil
}

// Pid is the first process's pid, in the caller's PID namespace.
func (p *Process) Pid() int { return p.pid }

// Signal sends sig to the first process: an init passes SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH on to CMD. Once the
// first process is reaped it is os.ErrProcessDone.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return os.ErrProcessDone
	}
	return syscall.Kill(p.pid, sig)
}

// Done is closed once the first process has exited and is reaped: with
// Init, the kernel has then ended every process of its PID namespace.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait returns CMD's exit status (128+N for signal N) as soon as it is
// known, and whether no process of the session is left. An init reports
// both before its own exit, so the caller's end of the session overlaps
// the kernel's teardown of the namespaces (Done); an init killed from
// outside gives its own status, and ended, as the kernel ended the
// namespace with it. Without Init, ended is false. It may be called again.
func (p *Process) Wait() (status int, ended bool, err error) {
	p.once.Do(func() {
		if p.ended != nil {
			var buf [8]byte
			_, rerr := io.ReadFull(p.ended, buf[:])
			p.ended.Close()
			if rerr == nil {
				p.status = int(int32(binary.NativeEndian.Uint32(buf[:4])))
				p.endedAll = binary.NativeEndian.Uint32(buf[4:]) != 0
				return
			}
		}
		<-p.done
		p.status, p.endedAll = statusOf(p.ws), p.init
		if !p.ws.Exited() && !p.ws.Signaled() {
			p.waitErr = fserr.New(fserr.IO, "rawinit: the first process ended with no status")
		}
	})
	return p.status, p.endedAll, p.waitErr
}

// reap waits for the first process to exit without reaping it, then
// reaps it under p.mu, so Signal never reaches another process given
// the pid after.
func (p *Process) reap() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	for {
		_, err := syscall.Wait4(p.pid, &p.ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	p.reaped = true
	p.mu.Unlock()
	close(p.done)
}

// statusOf is a wait status as an exit status: 128+N for signal N.
func statusOf(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
