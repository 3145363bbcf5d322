package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The runtime's own hooks around a fork, as package syscall uses them:
// signals blocked and the stack fixed before, restored after.
//
//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// initPlan is all the session's PID 1 needs, made before the fork: after
// it, the child runs no Go code but system calls on these values.
type initPlan struct {
	// clone are the namespaces the fork makes besides the PID one.
	clone uintptr
	// sync, when not 0, is a pipe the init reads one byte from before
	// anything else: its user namespace's maps are written.
	sync uintptr
	// ops are the mount plan as plain system calls, made first.
	ops []rawOp

	procSource, procTarget *byte
	path, dir              *byte
	argv, envv             []*byte
	ruleset                uintptr
	filter                 *unix.SockFprog
	status                 uintptr // written: CMD's wait status and 0, or an errno and the failed step
}

// rawOp is one system call of a plan the init makes as it is: its
// number and arguments; fdArg, when not -1, is the argument replaced by
// the result of the last op that keeps its result (a descriptor).
type rawOp struct {
	nr    uintptr
	args  [6]uintptr
	fdArg int
	keep  bool
}

// The init's steps, as it reports a failure; the plan's ops are
// stepOps and up.
const (
	stepSync = 1 + iota
	stepProc
	stepNoNewPrivs
	stepLandlock
	stepSeccomp
	stepFork
	stepOps = 100
)

// forkInit forks the session's PID 1, in a new PID namespace, from the
// calling thread. PID 1 mounts /proc, applies the layers, runs CMD, reaps
// every process until CMD ends, kills the rest, and writes CMD's status
// to p.status. Between fork and exit the child is a copy of one thread of
// a multithreaded program, so it only makes raw system calls on p and on
// this frame's variables, as syscall's forkAndExecInChild does.
//
//go:norace
//go:noinline
func forkInit(p *initPlan) (int, syscall.Errno) {
	var report [2]uint32
	var wstatus uint32
	var b [1]byte
	var last uintptr
	runtimeBeforeFork()
	pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, p.clone|uintptr(syscall.CLONE_NEWPID|syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		runtimeAfterFork()
		return int(pid), errno
	}
	runtimeAfterForkInChild()
	step := uint32(stepSync)
	if p.sync != 0 {
		if n, _, e := syscall.RawSyscall(syscall.SYS_READ, p.sync, uintptr(unsafe.Pointer(&b[0])), 1); e != 0 || n != 1 {
			errno = syscall.EPIPE
		}
	}
	for i := 0; errno == 0 && i < len(p.ops); i++ {
		step = stepOps + uint32(i)
		a := p.ops[i].args
		if p.ops[i].fdArg >= 0 {
			a[p.ops[i].fdArg] = last
		}
		r, _, e := syscall.RawSyscall6(p.ops[i].nr, a[0], a[1], a[2], a[3], a[4], a[5])
		errno = e
		if p.ops[i].keep {
			last = r
		}
	}
	if errno == 0 {
		step = stepProc
		_, _, errno = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(p.procSource)), uintptr(unsafe.Pointer(p.procTarget)),
			uintptr(unsafe.Pointer(p.procSource)), syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, 0, 0)
	}
	if errno == 0 {
		step = stepNoNewPrivs
		_, _, errno = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0)
	}
	if errno == 0 {
		step = stepLandlock
		_, _, errno = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, p.ruleset, 0, 0)
	}
	if errno == 0 {
		step = stepSeccomp
		_, _, errno = syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(p.filter)))
	}
	var cmd uintptr
	if errno == 0 {
		step = stepFork
		cmd, _, errno = syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	}
	if errno != 0 {
		report = [2]uint32{uint32(errno), step}
		syscall.RawSyscall(syscall.SYS_WRITE, p.status, uintptr(unsafe.Pointer(&report)), 8)
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 125, 0, 0)
	}
	if cmd == 0 {
		syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
		syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(p.dir)), 0, 0)
		syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(p.path)),
			uintptr(unsafe.Pointer(&p.argv[0])), uintptr(unsafe.Pointer(&p.envv[0])))
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
	}
	for {
		w, _, errno := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&wstatus)), 0, 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || w == cmd {
			break
		}
	}
	report[0] = wstatus
	syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0)
	for {
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&wstatus)), 0, 0, 0, 0); errno == syscall.ECHILD {
			break
		}
	}
	syscall.RawSyscall(syscall.SYS_WRITE, p.status, uintptr(unsafe.Pointer(&report)), 8)
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	return 0, 0
}
