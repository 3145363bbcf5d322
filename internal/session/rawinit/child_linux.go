package rawinit

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The child of forkFirst is a copy of one thread of a multithreaded Go
// program: a lock another thread held is held for good, and the runtime
// cannot run there. So from the fork on it calls no Go function but
// these, each //go:nosplit (the stack cannot grow: the runtime fixed
// its guard at the fork), //go:norace and //go:nocheckptr (no
// instrumentation that calls into the runtime), and the assembly system
// calls; it allocates nothing, writes no pointer (no write barrier) and
// keeps its values in the readied struct. syscall's forkAndExecInChild1
// keeps the same discipline.

// The runtime's own hooks around a fork, as package syscall uses them:
// signals blocked and the stack guard fixed before, restored after. The
// child's is afterForkInChild, which reads no heap.
//
//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

// forkFirst forks the first process from the calling thread, without
// the pages of unshared (but its stack's, found here, where it no longer
// moves). The parent returns its pid; the child never returns: it waits
// to be handed its spec (awaitStart), then lives its life
// (firstProcess).
//
//go:noinline
//go:norace
//go:nocheckptr
func forkFirst(r *readied, unshared []span) (pid uintptr, errno syscall.Errno) {
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, 0, uintptr(unsafe.Pointer(&r.threadMask)), 8, 0, 0)
	runtimeBeforeFork()
	adviseUnshared(unshared, r.page, uintptr(unsafe.Pointer(&pid)), unix.MADV_DONTFORK)
	pid, _, errno = syscall.RawSyscall6(syscall.SYS_CLONE, r.clone, 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		runtimeAfterFork()
		return pid, errno
	}
	afterForkInChild(r)
	awaitStart(r)
	firstProcess(r)
	return 0, 0
}

// awaitStart is the child's wait for its spec: it asks for the parent
// death signal first, then waits for the go-ahead, or for this
// process's end (its pidfd), which comes before the signal was set if
// the parent died first; handed over, it takes a descriptor table of
// its own (unshare), the caller's as it is now, and says so on the
// report pipe (stepNone). Until then it shares the caller's table: it
// closes nothing, and a failure is reported and ends it.
//
//go:nosplit
//go:norace
//go:nocheckptr
func awaitStart(r *readied) {
	if r.parentDeath != 0 {
		r.step = stepParentDeath
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, r.parentDeath, 0, 0, 0, 0); e != 0 {
			fail(r, e, 125)
		}
	}
	r.step = stepSync
	r.wait[0].Fd, r.wait[0].Events = int32(r.goR), unix.POLLIN
	n := uintptr(1)
	if r.parent >= 0 {
		r.wait[1].Fd, r.wait[1].Events = int32(r.parent), unix.POLLIN
		n = 2
	}
	for {
		_, _, e := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&r.wait[0])), n, 0, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			fail(r, e, 125)
		}
		break
	}
	if n == 2 && r.wait[1].Revents != 0 {
		for { // the caller is gone: there is no session to start
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 125, 0, 0)
		}
	}
	got, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(r.goR), uintptr(unsafe.Pointer(&r.b[0])), 1)
	if e == 0 && got != 1 {
		e = syscall.EPIPE
	}
	if e != 0 {
		fail(r, e, 125)
	}
	r.step = stepUnshare
	if _, _, e := syscall.RawSyscall(syscall.SYS_UNSHARE, unix.CLONE_FILES, 0, 0); e != 0 {
		fail(r, e, 125)
	}
	r.msg[0], r.msg[1] = stepNone, 0
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(r.report), uintptr(unsafe.Pointer(&r.msg)), 8)
}

// firstProcess is the first process's life: its ops, its descriptors, its
// terminal, its folder and /proc, the layers, then CMD executed, or
// started, supervised and outlived as the init of its PID namespace.
//
//go:nosplit
//go:norace
//go:nocheckptr
func firstProcess(r *readied) {
	var e syscall.Errno
	if r.init {
		// Blocked, the signals wait for sigtimedwait: pid 1 is sent
		// none it has no handler for unless they are blocked.
		r.step = stepSignals
		_, _, e = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&r.blockAll)),
			uintptr(unsafe.Pointer(&r.oldMask)), 8, 0, 0)
	}
	if e == 0 {
		e = begin(r)
	}
	if e == 0 {
		e = runOps(r)
	}
	if e == 0 {
		e = placeFiles(r)
	}
	if e == 0 {
		e = takeTerminal(r)
	}
	if e == 0 {
		e = enterDir(r)
	}
	if e == 0 {
		e = applyLayers(r)
	}
	if e == 0 {
		e = closeOthers(r) // the rulesets' descriptors too, now installed
	}
	if e != 0 {
		fail(r, e, 125)
	}
	if !r.init {
		execCmd(r)
	}
	startCmd(r)
	superviseCmd(r)
	endOthers(r)
	reportEnd(r)
}

// fail reports the errno e of r.step on the report pipe and exits with
// code.
//
//go:nosplit
//go:norace
//go:nocheckptr
func fail(r *readied, e syscall.Errno, code uintptr) {
	r.msg[0], r.msg[1] = r.step, uint32(e)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(r.report), uintptr(unsafe.Pointer(&r.msg)), 8)
	for {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, code, 0, 0)
	}
}

// begin makes an init undumpable.
//
//go:nosplit
//go:norace
//go:nocheckptr
func begin(r *readied) syscall.Errno {
	if r.init {
		// An init holds CMD's environment and a copy of the caller's
		// stack and data (on amd64 nothing of its heap; elsewhere all
		// of it, secrets included) and never executes anything: no
		// process of the session may read it (/proc/1/environ, mem) or
		// trace it. After the maps (Fork): the caller writes them as
		// the owner of this process's /proc files, which this makes
		// root's.
		r.step = stepUndumpable
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0, 0, 0, 0); e != 0 {
			return e
		}
	}
	return 0
}

// placeFiles moves the report and ended pipes to base and base+1, then
// makes each descriptor of r.files the child's 0, 1, …, as syscall's
// forkAndExecInChild1 does: first those that would be overwritten are
// moved above, then each is put in place without close-on-exec.
//
//go:nosplit
//go:norace
//go:nocheckptr
func placeFiles(r *readied) syscall.Errno {
	r.step = stepFiles
	r.nextFD = r.base + 2
	for i := 0; i < len(r.files); i++ {
		if r.files[i] < -1 {
			// Above every descriptor moved next, so none lands on it.
			fd, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(r.regs[-2-r.files[i]]), syscall.F_DUPFD_CLOEXEC, uintptr(r.base+2))
			if e != 0 {
				return e
			}
			r.files[i] = int(fd)
			r.nextFD = max(r.nextFD, int(fd)+1)
		}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(r.report), uintptr(r.base), syscall.O_CLOEXEC); e != 0 {
		return e
	}
	r.report = r.base
	if r.ended >= 0 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(r.ended), uintptr(r.base+1), syscall.O_CLOEXEC); e != 0 {
			return e
		}
		r.ended = r.base + 1
	}
	for i := 0; i < len(r.files); i++ {
		if r.files[i] >= 0 && r.files[i] < i {
			if _, _, e := syscall.RawSyscall(syscall.SYS_DUP3, uintptr(r.files[i]), uintptr(r.nextFD), syscall.O_CLOEXEC); e != 0 {
				return e
			}
			r.files[i] = r.nextFD
			r.nextFD++
		}
	}
	for i := 0; i < len(r.files); i++ {
		var e syscall.Errno
		switch {
		case r.files[i] == -1:
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(i), 0, 0)
		case r.files[i] == i:
			_, _, e = syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(i), syscall.F_SETFD, 0)
		default:
			_, _, e = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(r.files[i]), uintptr(i), 0)
		}
		if e != 0 {
			return e
		}
	}
	for i := len(r.files); i < 3; i++ {
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(i), 0, 0)
	}
	return 0
}

// closeRangeCloexec is close_range's CLOSE_RANGE_CLOEXEC
// (linux/close_range.h, which x/sys lacks): marked, not closed.
const closeRangeCloexec = 1 << 2

// closeOthers leaves the first process no descriptor but its Files and
// the two pipes: an init, which never executes, closes the others before
// CMD is forked; a first process that becomes CMD marks them
// close-on-exec, the caller's inherited ones too (syscall.ForkExec would
// pass those on).
//
//go:nosplit
//go:norace
//go:nocheckptr
func closeOthers(r *readied) syscall.Errno {
	r.step = stepClose
	var flags uintptr
	if !r.init {
		flags = closeRangeCloexec
	}
	_, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(len(r.files)), uintptr(r.base-1), flags)
	if e == 0 {
		_, _, e = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(r.base+2), ^uintptr(0)>>32, flags)
	}
	if e != syscall.ENOSYS && e != syscall.EINVAL { // kernels before 5.9, or 5.11 for the flag
		return e
	}
	for fd := len(r.files); fd < r.maxFD; fd++ {
		switch {
		case fd == r.base || fd == r.base+1:
		case r.init:
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		default:
			syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, syscall.FD_CLOEXEC)
		}
	}
	return 0
}

// takeTerminal makes the first process a session leader and ctty its
// controlling terminal, never one another session has.
//
//go:nosplit
//go:norace
//go:nocheckptr
func takeTerminal(r *readied) syscall.Errno {
	if r.setsid {
		r.step = stepSetsid
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0); e != 0 {
			return e
		}
	}
	if r.ctty >= 0 {
		r.step = stepCtty
		if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(r.ctty), syscall.TIOCSCTTY, 0); e != 0 {
			return e
		}
	}
	return 0
}

// enterDir changes to r.dir and mounts the PID namespace's /proc.
//
//go:nosplit
//go:norace
//go:nocheckptr
func enterDir(r *readied) syscall.Errno {
	if r.dir != nil {
		r.step = stepChdir
		if _, _, e := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(r.dir)), 0, 0); e != 0 {
			return e
		}
	}
	if r.mountProc {
		r.step = stepProc
		_, _, e := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(r.procSource)), uintptr(unsafe.Pointer(r.procTarget)),
			uintptr(unsafe.Pointer(r.procSource)), syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, 0, 0)
		return e
	}
	return 0
}

// execCmd executes CMD; in an init's child, first in a process group of
// its own, the terminal's foreground, with the signal mask the runtime
// had. It never returns: a failed execve is reported, exit 127.
//
//go:nosplit
//go:norace
//go:nocheckptr
func execCmd(r *readied) {
	if r.init {
		r.step = stepPgid
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETPGID, 0, 0, 0); e != 0 {
			fail(r, e, 125)
		}
		if r.ctty >= 0 {
			// Made while every signal is blocked: SIGTTOU too.
			r.step = stepForeground
			pid, _, _ := syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
			r.pgrp = int32(pid)
			if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(r.ctty), syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&r.pgrp))); e != 0 {
				fail(r, e, 125)
			}
		}
		r.step = stepSignals
		if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&r.oldMask)), 0, 8, 0, 0); e != 0 {
			fail(r, e, 125)
		}
	}
	r.step = stepExec
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(r.path)),
		uintptr(unsafe.Pointer(&r.argv[0])), uintptr(unsafe.Pointer(&r.envv[0])))
	fail(r, e, 127)
}
