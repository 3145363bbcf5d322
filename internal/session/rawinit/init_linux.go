package rawinit

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// endWait bounds endOthers, in seconds: a process that SIGKILL does not
// end at once is stuck in the kernel, and the kernel's own end of the
// namespace, at the init's exit, waits for it instead.
const endWait = 2

// startCmd starts CMD from the init (vforkCmd) and closes the init's
// copy of the report pipe: CMD's execve closes the last.
//
//go:nosplit
//go:norace
//go:nocheckptr
func startCmd(r *readied) {
	r.step = stepFork
	cmd, e := vforkCmd(r)
	if e != 0 {
		fail(r, e, 125)
	}
	r.cmd = cmd
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(r.report), 0, 0)
}

// cmdClone are the clone flags of CMD's start from the init (vforkCmd).
const cmdClone = uintptr(syscall.SIGCHLD) | unix.CLONE_VM | unix.CLONE_VFORK

// vforkCmd starts CMD (execCmd) in a child that shares the init's
// memory and runs on its stack until its execve, the init's thread
// waiting (CLONE_VM|CLONE_VFORK): the init is a copy of the supervisor's
// address space, less its heap, which a plain fork would copy again only for CMD's
// execve to throw away. The child never returns from here; the parent
// returns at once, using nothing of this frame but the results rawVfork
// wrote once the child was gone, since the child's calls may have
// written over the rest (syscall's forkAndExecInChild1 keeps the same
// rule).
//
//go:noinline
//go:nosplit
//go:norace
//go:nocheckptr
func vforkCmd(r *readied) (pid uintptr, e syscall.Errno) {
	pid, errno := rawVfork(cmdClone)
	if errno != 0 || pid != 0 {
		return pid, syscall.Errno(errno)
	}
	execCmd(r)
	return 0, 0
}

// superviseCmd waits for the init's signals until CMD ended: a child's
// end (SIGCHLD) reaps every child that ended, orphans included; the
// forwarded signals are passed on to CMD.
//
//go:nosplit
//go:norace
//go:nocheckptr
func superviseCmd(r *readied) {
	for !r.cmdDone {
		sig, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&r.waitSet)),
			uintptr(unsafe.Pointer(&r.info)), 0, 8, 0, 0)
		switch {
		case e == syscall.EINTR:
		case e != 0:
			return // cannot happen with these arguments; endOthers still reaps CMD
		case sig == uintptr(syscall.SIGCHLD):
			reapAll(r)
		default:
			syscall.RawSyscall(syscall.SYS_KILL, r.cmd, sig, 0)
		}
	}
}

// reapAll reaps every child that ended, noting CMD's exit status (128+N
// for signal N), and says whether a child is left.
//
//go:nosplit
//go:norace
//go:nocheckptr
func reapAll(r *readied) bool {
	for {
		pid, _, e := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&r.wstatus)), syscall.WNOHANG, 0, 0, 0)
		switch {
		case e == syscall.EINTR:
		case e != 0: // ECHILD: none is left
			if !r.cmdDone {
				r.cmdDone, r.status = true, 1 // CMD is gone without a status
			}
			return false
		case pid == 0:
			return true
		case pid == r.cmd:
			r.cmdDone = true
			if sig := r.wstatus & 0x7f; sig != 0 {
				r.status = 128 + sig
			} else {
				r.status = (r.wstatus >> 8) & 0xff
			}
		}
	}
}

// endOthers kills every other process of the PID namespace and reaps
// them, for at most endWait: the ended word of the report is 1 once none
// is left. A fork racing the kill fails, as the kernel's own end of a
// namespace relies on too.
//
//go:nosplit
//go:norace
//go:nocheckptr
func endOthers(r *readied) {
	syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0) // ESRCH: none left
	syscall.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&r.end)), 0)
	r.end.Sec += endWait
	r.msg[1] = 0
	for {
		if !reapAll(r) {
			r.msg[1] = 1
			return
		}
		syscall.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&r.now)), 0)
		r.left.Sec, r.left.Nsec = r.end.Sec-r.now.Sec, r.end.Nsec-r.now.Nsec
		if r.left.Nsec < 0 {
			r.left.Sec, r.left.Nsec = r.left.Sec-1, r.left.Nsec+1e9
		}
		if r.left.Sec < 0 {
			return
		}
		syscall.RawSyscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&r.chldSet)), 0,
			uintptr(unsafe.Pointer(&r.left)), 8, 0, 0)
	}
}

// reportEnd closes the init's Files, so a terminal among them is closed
// by all and its relay drains it, writes CMD's status and the ended word
// on the ended pipe, and exits with CMD's status.
//
//go:nosplit
//go:norace
//go:nocheckptr
func reportEnd(r *readied) {
	for i := 0; i < len(r.files); i++ {
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(i), 0, 0)
	}
	r.msg[0] = uint32(r.status)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(r.ended), uintptr(unsafe.Pointer(&r.msg)), 8)
	for {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, uintptr(r.status), 0, 0)
	}
}
