package harness

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompErrno is a test-only command that plays a container whose
// seccomp filter refuses a system call: it makes openat2 fail with the
// given errno for the command it then runs (exec, so the filter is
// inherited), and leaves every other call alone.
//
//	seccomp-errno openat2 ENOSYS|EPERM|EAGAIN|EINTR COMMAND [ARGS...]
//
// Exit 100 when it cannot set the filter up.
func seccompErrno() {
	args := os.Args[1:]
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "seccomp-errno: "+format+"\n", a...)
		os.Exit(100)
	}
	if len(args) < 3 || args[0] != "openat2" {
		fail("usage: seccomp-errno openat2 ERRNO COMMAND [ARGS...]")
	}
	errno, ok := map[string]unix.Errno{"ENOSYS": unix.ENOSYS, "EPERM": unix.EPERM, "EAGAIN": unix.EAGAIN, "EINTR": unix.EINTR}[args[1]]
	if !ok {
		fail("unknown errno %q", args[1])
	}
	arch, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		fail("no filter for %s", runtime.GOARCH)
	}
	path, err := exec.LookPath(args[2])
	if err != nil {
		fail("%v", err)
	}
	const (
		ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		nrAt = 0 // offsetof(struct seccomp_data, nr)
		arAt = 4 // offsetof(struct seccomp_data, arch)
	)
	filter := []unix.SockFilter{
		{Code: ldW, K: arAt},
		{Code: jeq, K: arch, Jt: 0, Jf: 3}, // another ABI: allow
		{Code: ldW, K: nrAt},
		{Code: jeq, K: unix.SYS_OPENAT2, Jt: 0, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// The filter is the calling thread's, and exec keeps it: stay on the
	// thread until then.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs: %v", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		fail("seccomp: %v", e)
	}
	err = syscall.Exec(path, args[2:], os.Environ())
	fail("exec %s: %v", path, err)
}
