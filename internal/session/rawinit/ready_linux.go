package rawinit

import (
	"encoding/binary"
	"io"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// readied is everything the first process reads and writes after the
// fork, made before it: the child allocates nothing and keeps no
// variable on its stack but a few words, so every value it needs, its
// scratch space included, is a field here. It writes only scalar fields.
type readied struct {
	clone                   uintptr // clone's flags, CLONE_NEWPID and SIGCHLD included
	init, mountProc, setsid bool
	ctty                    int
	parentDeath             uintptr

	files  []int // the caller's descriptor for each of the child's 0, 1, …; moved by the child
	base   int   // above every descriptor named here: the report pipe moves to base, the ended pipe to base+1
	report int   // the report pipe's write end, as the child inherits it
	ended  int   // the ended pipe's write end (Init), or -1
	syncR  int   // the user namespace's go-ahead (CLONE_NEWUSER), or -1
	syncW  int
	maxFD  int // RLIMIT_NOFILE: the last descriptor closed where close_range is missing

	argv0, dirName             string // for the failure's words
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
	progs                      [][]unix.SockFilter // what filters point to, kept alive
	blockAll, oldMask, waitSet uint64              // kernel sigsets (64 signals)
	chldSet                    uint64

	// The fork (unshared_linux.go): the caller's pages it leaves out,
	// the signals the child resets to dfl (an all-zero sigaction), the
	// calling thread's signal mask before it.
	unshared   []span
	page       uintptr
	caught     uint64
	dfl        [8]uint64
	threadMask uint64

	// The child's scratch space.
	step     uint32
	msg      [2]uint32 // a failure: its step and errno; an init's end: CMD's status and ended
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

	// The ops (ops.go): readied, their registers, what they point to,
	// and the child's scratch space for them.
	ops    []rop // with what they point to
	regs   []int
	kept   uint64 // the registers Files names (FromReg), left open after the ops
	opSpec []Op
	opAt   int
	opArgs [6]uintptr
	stat   unix.Stat_t

	// The parent's ends of the pipes.
	reportR, endedR, syncWFile *os.File
	reportW, endedW, syncRFile *os.File
}

// forwarded are the signals an init passes on to CMD: those dsh-fs exec
// forwards to its child, and SIGWINCH for a session without a terminal
// of its own (with one, the kernel sends it to the foreground).
var forwarded = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// ready makes s's readied values and pipes; on an error, nothing is left
// open.
func ready(s Spec) (*readied, error) {
	r := &readied{clone: s.Clone | uintptr(syscall.SIGCHLD), init: s.Init, mountProc: s.MountProc,
		setsid: s.Session, ctty: s.Ctty, parentDeath: uintptr(s.ParentDeath), ended: -1, syncR: -1, syncW: -1,
		files: append([]int{}, s.Files...), keyring: s.Layers.JoinKeyring,
		rulesets: append([]int{}, s.Layers.Rulesets...), blockAll: ^uint64(0)}
	if s.Init {
		r.clone |= unix.CLONE_NEWPID
	}
	if p := s.Layers.DropPrivileges; p != nil {
		r.drop, r.lastCap = true, p.LastCap
		r.capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	}
	for _, f := range s.Layers.Filters {
		prog := append([]unix.SockFilter{}, f...)
		if len(prog) == 0 {
			return nil, fserr.New(fserr.InvalidArgument, "rawinit: an empty seccomp program")
		}
		r.progs = append(r.progs, prog)
		r.filters = append(r.filters, unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]})
	}
	for _, sig := range forwarded {
		r.waitSet |= sigBit(sig)
	}
	r.chldSet = sigBit(syscall.SIGCHLD)
	r.caught, r.page = caughtSignals(), uintptr(os.Getpagesize())
	r.waitSet |= r.chldSet
	var lim unix.Rlimit
	r.maxFD = 1 << 16
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(r.maxFD) {
		r.maxFD = int(lim.Cur)
	}
	if err := r.strings(s); err != nil {
		return nil, err
	}
	if err := r.readyOps(s); err != nil {
		return nil, err
	}
	for _, fd := range s.Files {
		if fd < -1 {
			r.kept |= 1 << (-2 - fd)
			if -2-fd >= len(r.regs) {
				r.regs = append(r.regs, make([]int, -1-fd-len(r.regs))...)
				for i := range r.regs {
					r.regs[i] = -1
				}
			}
		}
	}
	if err := r.pipes(s); err != nil {
		r.closeAll()
		return nil, fserr.Wrap(fserr.IO, "rawinit: "+err.Error(), err)
	}
	return r, nil
}

// sigBit is sig's bit in a kernel sigset.
func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// strings makes s's C strings.
func (r *readied) strings(s Spec) error {
	var err error
	r.argv0, r.dirName = s.Argv[0], s.Dir
	bad := func(e error) error {
		return fserr.Wrap(fserr.InvalidArgument, "rawinit: a NUL in the command, its environment or folder", e)
	}
	if r.path, err = syscall.BytePtrFromString(s.Path); err != nil {
		return bad(err)
	}
	if r.argv, err = syscall.SlicePtrFromStrings(s.Argv); err != nil {
		return bad(err)
	}
	if r.envv, err = syscall.SlicePtrFromStrings(s.Env); err != nil {
		return bad(err)
	}
	if s.Dir != "" {
		if r.dir, err = syscall.BytePtrFromString(s.Dir); err != nil {
			return bad(err)
		}
	}
	r.procSource, _ = syscall.BytePtrFromString("proc")
	r.procTarget, _ = syscall.BytePtrFromString("/proc")
	return nil
}

// pipes makes the report pipe, the ended pipe of an init and the user
// namespace's go-ahead, and the base the child moves its own ends to.
func (r *readied) pipes(s Spec) error {
	var err error
	if r.reportR, r.reportW, err = os.Pipe(); err != nil {
		return err
	}
	r.report = int(r.reportW.Fd())
	if s.Init {
		if r.endedR, r.endedW, err = blockingPipe(); err != nil {
			return err
		}
		r.ended = int(r.endedW.Fd())
	}
	if s.Clone&unix.CLONE_NEWUSER != 0 {
		if r.syncRFile, r.syncWFile, err = os.Pipe(); err != nil {
			return err
		}
		r.syncR, r.syncW = int(r.syncRFile.Fd()), int(r.syncWFile.Fd())
	}
	r.base = max(len(r.files), r.report, r.ended, r.syncR, r.syncW) + 1
	for _, fd := range r.files {
		r.base = max(r.base, fd+1)
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
// -- true`, medians of 31 traced calls); the wait for CMD's execve on
// the report pipe gained nothing measurable the same way and stays on
// the poller.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// os.NewFile keeps a blocking descriptor out of the poller.
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// fork forks the first process (forkFirst) and closes the child's ends
// of the pipes here.
func (r *readied) fork() (int, error) {
	// What the fork keeps of the thread (its TLS word, its C data) is
	// the thread's that forks: one thread from the maps' reading on.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.unshared = unshared(r.memory())
	// Under the lock another start's fork takes too: what this fork
	// leaves out holds that start's values, and is put back before its
	// fork can run.
	syscall.ForkLock.Lock()
	pid, errno := forkFirst(r)
	r.reshare()
	syscall.ForkLock.Unlock()
	for _, f := range []*os.File{r.reportW, r.endedW, r.syncRFile} {
		if f != nil {
			f.Close()
		}
	}
	if errno != 0 {
		r.closeAll()
		return 0, fserr.Wrap(fserr.IO, "rawinit: fork: "+errno.Error(), errno)
	}
	return int(pid), nil
}

// release lets the child of a new user namespace go on, its maps written.
func (r *readied) release() {
	r.syncWFile.Write([]byte{1})
	r.syncWFile.Close()
}

// readFailure reads the report pipe to its end, closed by CMD's execve
// and the init: nil when nothing was written, else the failure it says.
func (r *readied) readFailure() error {
	var buf [8]byte
	n, _ := io.ReadFull(r.reportR, buf[:])
	r.reportR.Close()
	if n < len(buf) {
		return nil
	}
	step := binary.NativeEndian.Uint32(buf[:4])
	errno := syscall.Errno(binary.NativeEndian.Uint32(buf[4:]))
	return r.failure(step, errno)
}

// abandon ends the first process at pid, which never ran CMD or whose
// start failed, and reaps it.
func (r *readied) abandon(pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	r.closeAll()
}

// closeAll closes every pipe end the parent still holds.
func (r *readied) closeAll() {
	for _, f := range []*os.File{r.reportR, r.reportW, r.endedR, r.endedW, r.syncRFile, r.syncWFile} {
		if f != nil {
			f.Close()
		}
	}
}
