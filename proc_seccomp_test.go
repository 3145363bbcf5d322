package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestOpenat2Retries: where openat2 keeps asking for a retry (EAGAIN, as
// when renames race the lookup without end, or EINTR), a mutation gives up
// after a bounded number of tries with FS_IO, changing nothing, rather
// than spinning.
func TestOpenat2Retries(t *testing.T) {
	helper := seccompHelper(t)
	for _, errno := range []string{"EAGAIN", "EINTR"} {
		t.Run(errno, func(t *testing.T) {
			ws := t.TempDir()
			writeTree(t, ws, map[string]string{"f.txt": "old\n"})
			env := procEnv(t, ws)
			for _, args := range [][]string{
				{"write", "f.txt", "--overwrite", "--content", "new\n"},
				{"edit", "f.txt", "--old", "old", "--new", "new"},
				{"write", "sub/g.txt", "--mkdir", "--content", "new\n"},
			} {
				start := time.Now()
				c := procCmd(helper, env, ws, append([]string{"openat2", errno, "dsh-fs"}, args...)...)
				code, res, _, stderr := procRun(t, c, nil)
				if code != 1 || res.Error.Code != "FS_IO" || !strings.Contains(res.Error.Message, "openat2") {
					t.Errorf("%v under openat2 %s: exit %d, %+v (stderr %q); want exit 1, FS_IO naming openat2", args, errno, code, res.Error, stderr)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%v took %v", args, d)
				}
			}
			if got := dirNames(t, ws); strings.Join(got, " ") != "f.txt" {
				t.Errorf("workspace holds %v, want only f.txt", got)
			}
			if b, _ := os.ReadFile(ws + "/f.txt"); string(b) != "old\n" {
				t.Errorf("f.txt = %q, want it unchanged", b)
			}
		})
	}
}

// seccompHelper finds the seccomp-errno command that TestMain installed.
func seccompHelper(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("seccomp-errno")
	if err != nil {
		t.Fatalf("seccomp-errno is not on $PATH: %v", err)
	}
	return p
}
