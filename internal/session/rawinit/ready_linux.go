package rawinit

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// readied is everything the first process reads and writes after the
// fork, in the arena (arena_linux.go): the child allocates nothing and
// keeps no variable on its stack but a few words, so every value it
// needs, its scratch space included, is a field here or in the arena. It
// writes only scalar fields. The fields above "The spec" are set before
// the fork (Fork), the rest by Pending.Start.
type readied struct {
	clone       uintptr // clone's flags: CLONE_FILES, CLONE_NEWPID and SIGCHLD included
	init        bool
	parentDeath uintptr

	// The hand-over (Fork, awaitStart): the go-ahead's read end, this
	// process's pidfd (-1 without), the report pipe's and the ended
	// pipe's write ends as the child inherits them.
	goR    int
	parent int
	report int
	ended  int // the ended pipe's write end (Init), or -1
	wait   [2]unix.PollFd

	// The fork (unshared_linux.go): the signals the child resets to dfl
	// (an all-zero sigaction), the calling thread's signal mask before
	// it.
	page       uintptr
	caught     uint64
	dfl        [8]uint64
	threadMask uint64

	// The spec.
	mountProc, setsid bool
	ctty              int
	files             []int // the caller's descriptor for each of the child's 0, 1, …; moved by the child
	base              int   // above every descriptor named here: the report pipe moves to base, the ended pipe to base+1
	maxFD             int   // RLIMIT_NOFILE: the last descriptor closed where close_range is missing

	path, dir                  *byte
	argv, envv                 []*byte
	procSource, procTarget     *byte
	keyring                    bool
	rulesets                   []int
	drop                       bool
	lastCap                    int
	capHdr                     unix.CapUserHeader
	capData                    [2]unix.CapUserData // all zero: capset empties every set
	filters                    []unix.SockFprog
	blockAll, oldMask, waitSet uint64 // kernel sigsets (64 signals)
	chldSet                    uint64

	// The child's scratch space.
	step     uint32
	msg      [2]uint32 // a failure: its step and errno; the hand-over: stepNone; an init's end: CMD's status and ended
	nextFD   int
	cmd      uintptr
	cmdDone  bool
	status   int32
	wstatus  int32
	pgrp     int32
	info     unix.Siginfo
	now, end unix.Timespec
	left     unix.Timespec
	b        [1]byte

	// The ops (ops.go): readied, their registers, and the child's
	// scratch space for them.
	ops    []rop
	regs   []int
	kept   uint64 // the registers Files names (FromReg), left open after the ops
	opAt   int
	opArgs [6]uintptr
	stat   unix.Stat_t
}

// Early is what a first process must be forked with, before the rest of
// its Spec is known: the Spec's fields of the same names.
type Early struct {
	Clone       uintptr
	Init        bool
	ParentDeath syscall.Signal
}

// early is the part of s a Pending must have been forked with.
func (s Spec) early() Early { return Early{Clone: s.Clone, Init: s.Init, ParentDeath: s.ParentDeath} }

// Pending is a first process forked before its spec is known (Fork),
// waiting to be handed it (Start) or abandoned (Abandon): its fork and
// a new user namespace's maps are then off the path to CMD. It shares
// the caller's descriptor table until it is handed over, so whatever
// the caller opens meanwhile it has as the caller has it, as if forked
// at the hand-over; its memory is its own but for the arena.
type Pending struct {
	early Early
	a     *arena
	r     *readied // in a
	pid   int
	ended bool // Start or Abandon ran

	// The pipes' ends: the caller's, and the child's, which the caller
	// closes once the child holds a table of its own.
	reportR, endedR, goW *os.File
	reportW, endedW, goR *os.File
	parent               int // this process's pidfd, or -1

	// For the failure's words.
	argv0, dirName string
	opSpec         []Op
}

// forwarded are the signals an init passes on to CMD: those dsh-fs exec
// forwards to its child, and SIGWINCH for a session without a terminal
// of its own (with one, the kernel sends it to the foreground).
var forwarded = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// Fork forks a first process for a Spec of e, from the calling thread,
// whose namespaces, root and Landlock domain the child inherits, as
// Start's does; with CLONE_NEWUSER it writes the new user namespace's
// maps. The child then waits to be handed its spec (Start), dies with
// the calling thread (ParentDeath) or with this process, and is ended
// by Abandon. Its errors are fserr.IO.
func Fork(e Early) (*Pending, error) {
	if e.Clone&(unix.CLONE_NEWPID|unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_VFORK|unix.CLONE_FILES) != 0 {
		return nil, fserr.New(fserr.InvalidArgument, "rawinit: Clone names namespaces only, and not the PID one (Init)")
	}
	a, err := newArena()
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "rawinit: "+err.Error(), err)
	}
	p := &Pending{early: e, a: a, r: placeOne[readied](a), parent: -1}
	r := p.r
	r.clone = e.Clone | unix.CLONE_FILES | uintptr(syscall.SIGCHLD)
	if e.Init {
		r.clone |= unix.CLONE_NEWPID
	}
	r.init, r.parentDeath, r.ended, r.parent = e.Init, uintptr(e.ParentDeath), -1, -1
	r.caught, r.page = caughtSignals(), uintptr(os.Getpagesize())
	if err := p.pipes(); err != nil {
		p.closeAll()
		a.unmap()
		return nil, fserr.Wrap(fserr.IO, "rawinit: "+err.Error(), err)
	}
	if err := p.fork(); err != nil {
		return nil, err
	}
	if e.Clone&unix.CLONE_NEWUSER != 0 {
		if err := mapUser(p.pid); err != nil {
			p.Abandon()
			return nil, fserr.Wrap(fserr.IO, "user namespace: "+err.Error(), err)
		}
	}
	return p, nil
}

// pipes makes the report pipe, an init's ended pipe, the go-ahead and
// this process's pidfd, which the child watches while it waits.
func (p *Pending) pipes() error {
	r := p.r
	var err error
	if p.reportR, p.reportW, err = blockingPipe(); err != nil {
		return err
	}
	r.report = int(p.reportW.Fd())
	if p.early.Init {
		if p.endedR, p.endedW, err = blockingPipe(); err != nil {
			return err
		}
		r.ended = int(p.endedW.Fd())
	}
	if p.goR, p.goW, err = blockingPipe(); err != nil {
		return err
	}
	r.goR = int(p.goR.Fd())
	// ENOSYS before Linux 5.3: the child then learns of no end of this
	// process that comes before its own parent-death signal is set.
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err == nil {
		unix.CloseOnExec(fd)
		p.parent, r.parent = fd, fd
	}
	return nil
}

// blockingPipe is a pipe whose reads block the reading thread in the
// kernel rather than park a goroutine on the runtime's poller. The end's
// report is read by Wait on the session's own thread, locked to it: a
// parked goroutine is noticed by whichever thread waits in epoll_wait,
// which then hands it to its locked thread, two wake-ups where a read
// takes one. On this project's bench machine that cut the time from
// CMD's end to the supervisor's knowing it from 1.66 to 0.51 ms (`exec
// -- true`, medians of 31 traced calls). The report pipe is read with a
// timed poll for the hand-over (handOver), which the poller cannot do
// with a descriptor of a table it shares.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// os.NewFile keeps a blocking descriptor out of the poller.
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// fork forks the child (forkFirst) from the calling thread.
func (p *Pending) fork() error {
	// What the fork keeps of the thread (its TLS word, its C data) is
	// the thread's that forks: one thread from the maps' reading on.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := unshared()
	// Under the lock another start's fork takes too: what this fork
	// leaves out is put back before that fork can run.
	syscall.ForkLock.Lock()
	pid, errno := forkFirst(p.r, out)
	reshare(out)
	syscall.ForkLock.Unlock()
	if errno != 0 {
		p.closeAll()
		p.a.unmap()
		return fserr.Wrap(fserr.IO, "rawinit: fork: "+errno.Error(), errno)
	}
	p.pid = int(pid)
	return nil
}

// Start hands s to the child, which must have been forked for it
// (Fork with s's Early), and returns once CMD was executed, or the error
// that kept it from running (fserr.IO, naming the step), leaving no
// process behind. Either way p is used up.
func (p *Pending) Start(s Spec) (*Process, error) {
	if p.ended {
		return nil, fserr.New(fserr.InvalidArgument, "rawinit: a pending first process started twice")
	}
	if s.early() != p.early {
		p.Abandon()
		return nil, fserr.New(fserr.InvalidArgument, "rawinit: the spec is not the one the first process was forked for")
	}
	if err := s.check(); err != nil {
		p.Abandon()
		return nil, err
	}
	if err := p.ready(s); err != nil {
		p.Abandon()
		return nil, err
	}
	if err := p.handOver(); err != nil {
		p.Abandon()
		return nil, err
	}
	err := p.readFailure()
	p.ended = true
	p.a.unmap()
	if err != nil {
		p.kill()
		p.closeAll()
		return nil, err
	}
	proc := &Process{pid: p.pid, init: s.Init, ended: p.endedR, done: make(chan struct{})}
	go proc.reap()
	return proc, nil
}

// Fits says s is a spec p was forked for.
func (p *Pending) Fits(s Spec) bool { return p != nil && !p.ended && s.early() == p.early }

// Abandon ends the child, which never ran CMD, and reaps it; p is used
// up. It may be called again, and on nil.
func (p *Pending) Abandon() {
	if p == nil || p.ended {
		return
	}
	p.ended = true
	p.kill()
	p.closeAll()
	p.a.unmap()
}

// ready readies s's values in the arena, after the fork's; on an error,
// nothing is handed over.
func (p *Pending) ready(s Spec) error {
	r, a := p.r, p.a
	r.mountProc, r.setsid, r.ctty = s.MountProc, s.Session, s.Ctty
	r.files = placeCopy(a, s.Files)
	r.keyring = s.Layers.JoinKeyring
	r.rulesets = placeCopy(a, s.Layers.Rulesets)
	r.blockAll = ^uint64(0)
	if d := s.Layers.DropPrivileges; d != nil {
		r.drop, r.lastCap = true, d.LastCap
		r.capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	}
	r.filters = place[unix.SockFprog](a, len(s.Layers.Filters))
	for i, f := range s.Layers.Filters {
		if len(f) == 0 {
			return fserr.New(fserr.InvalidArgument, "rawinit: an empty seccomp program")
		}
		prog := placeCopy(a, f)
		r.filters[i] = unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	}
	for _, sig := range forwarded {
		r.waitSet |= sigBit(sig)
	}
	r.chldSet = sigBit(syscall.SIGCHLD)
	r.waitSet |= r.chldSet
	var lim unix.Rlimit
	r.maxFD = 1 << 16
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(r.maxFD) {
		r.maxFD = int(lim.Cur)
	}
	if err := p.strings(s); err != nil {
		return err
	}
	regs, err := p.readyOps(s)
	if err != nil {
		return err
	}
	for _, fd := range s.Files {
		if fd < -1 {
			r.kept |= 1 << (-2 - fd)
			regs = max(regs, -1-fd)
		}
	}
	r.regs = place[int](a, regs)
	for i := range r.regs {
		r.regs[i] = -1
	}
	// Above every descriptor the child still uses once it places its
	// files: the rulesets were made after the fork's pipes, maybe.
	r.base = max(len(r.files), r.report, r.ended, r.goR, r.parent) + 1
	for _, fd := range slices.Concat(r.files, r.rulesets) {
		r.base = max(r.base, fd+1)
	}
	if a.full {
		return fserr.New(fserr.InvalidArgument, "rawinit: the command, its environment and the ops take more than the first process's 16 MiB")
	}
	return nil
}

// sigBit is sig's bit in a kernel sigset.
func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// strings makes s's C strings.
func (p *Pending) strings(s Spec) error {
	r, a := p.r, p.a
	p.argv0, p.dirName = s.Argv[0], s.Dir
	for _, v := range [][]string{{s.Path, s.Dir}, s.Argv, s.Env} {
		for _, str := range v {
			if strings.IndexByte(str, 0) >= 0 {
				return fserr.Wrap(fserr.InvalidArgument, "rawinit: a NUL in the command, its environment or folder", syscall.EINVAL)
			}
		}
	}
	r.path, r.argv, r.envv = a.cstring(s.Path), a.cstrings(s.Argv), a.cstrings(s.Env)
	if s.Dir != "" {
		r.dir = a.cstring(s.Dir)
	}
	r.procSource, r.procTarget = a.cstring("proc"), a.cstring("/proc")
	return nil
}

// handOverPoll is how long the caller waits for the child's hand-over
// at a time before it looks whether the child is still there: a child
// killed before it took its table would never close the report pipe,
// whose write end the caller's table, shared, still holds.
const handOverPoll = 50 * time.Millisecond

// handOver lets the child go on, and waits until it holds a descriptor
// table of its own (its first report: stepNone), then closes the
// child's ends here.
func (p *Pending) handOver() error {
	if _, err := p.goW.Write([]byte{1}); err != nil {
		return fserr.Wrap(fserr.IO, "rawinit: the hand-over: "+err.Error(), err)
	}
	if err := awaitReport(int(p.reportR.Fd()), p.exited); err != nil {
		return err
	}
	var buf [8]byte
	if _, err := io.ReadFull(p.reportR, buf[:]); err != nil {
		return fserr.New(fserr.IO, "rawinit: the first process ended before its start")
	}
	if step := binary.NativeEndian.Uint32(buf[:4]); step != stepNone {
		return p.failure(step, syscall.Errno(binary.NativeEndian.Uint32(buf[4:])))
	}
	for _, f := range []*os.File{p.reportW, p.endedW, p.goR, p.goW} {
		if f != nil {
			f.Close()
		}
	}
	p.reportW, p.endedW, p.goR, p.goW = nil, nil, nil, nil
	if p.parent >= 0 {
		unix.Close(p.parent)
		p.parent = -1
	}
	return nil
}

// awaitReport waits until the report pipe at fd has something to read,
// looking at each handOverPoll whether the child ended: one that ended
// with nothing there never reports. Its report may have come between a
// look at the pipe and one at its end, so the pipe is looked at once
// more after the end is seen.
func awaitReport(fd int, ended func() bool) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for gone := false; ; {
		ts := unix.NsecToTimespec(int64(handOverPoll)) // ppoll writes back what was left
		if gone {
			ts = unix.Timespec{}
		}
		n, err := unix.Ppoll(fds, &ts, nil)
		switch {
		case err != nil && !errors.Is(err, unix.EINTR):
			return fserr.Wrap(fserr.IO, "rawinit: the hand-over: "+err.Error(), err)
		case n > 0:
			return nil
		case gone:
			return fserr.New(fserr.IO, "rawinit: the first process ended before its start")
		}
		gone = ended()
	}
}

// exited says whether the child has ended, without reaping it.
func (p *Pending) exited() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo != 0
}

// readFailure reads the report pipe to its end, closed by CMD's execve
// and the init: nil when nothing was written, else the failure it says.
func (p *Pending) readFailure() error {
	var buf [8]byte
	n, _ := io.ReadFull(p.reportR, buf[:])
	p.reportR.Close()
	p.reportR = nil
	if n < len(buf) {
		return nil
	}
	step := binary.NativeEndian.Uint32(buf[:4])
	errno := syscall.Errno(binary.NativeEndian.Uint32(buf[4:]))
	return p.failure(step, errno)
}

// kill ends the child and reaps it.
func (p *Pending) kill() {
	syscall.Kill(p.pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(p.pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
}

// closeAll closes every pipe end and descriptor the caller still holds.
func (p *Pending) closeAll() {
	for _, f := range []*os.File{p.reportR, p.reportW, p.endedR, p.endedW, p.goR, p.goW} {
		if f != nil {
			f.Close()
		}
	}
	p.reportR, p.reportW, p.endedR, p.endedW, p.goR, p.goW = nil, nil, nil, nil, nil, nil
	if p.parent >= 0 {
		unix.Close(p.parent)
		p.parent = -1
	}
}
