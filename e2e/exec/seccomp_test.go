package e2e

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

// TestWithoutOpenat2: where a seccomp filter refuses openat2 (ENOSYS or
// EPERM, as older container runtimes do) or makes it ask for a retry
// without end (EAGAIN, EINTR), every operation still works, through the
// resolver's component walk, and still refuses what it refuses with
// openat2: a symlink out of the workspace, a write into .git. Nothing
// spins, and nothing is left behind.
func TestWithoutOpenat2(t *testing.T) {
	helper := seccompHelper(t)
	for _, errno := range []string{"ENOSYS", "EPERM", "EAGAIN", "EINTR"} {
		t.Run(errno, func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			writeTree(t, ws, map[string]string{"f.txt": "old\n", ".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n"})
			if err := os.Symlink(out, ws+"/out"); err != nil {
				t.Fatal(err)
			}
			env := procEnv(t, ws)
			for _, tc := range []struct {
				args []string
				code string // "" for success
			}{
				{args: []string{"write", "f.txt", "--overwrite", "--content", "new\n"}},
				{args: []string{"edit", "f.txt", "--old", "new", "--new", "newer"}},
				{args: []string{"write", "sub/deeper/g.txt", "--mkdir", "--content", "g\n"}},
				{args: []string{"read", "sub/deeper/g.txt"}},
				{args: []string{"ls", "sub"}},
				{args: []string{"stat", "f.txt"}},
				{args: []string{"grep", "newer", "."}},
				{args: []string{"write", "out/x.txt", "--content", "x\n"}, code: "FS_SANDBOX_DENIED"},
				{args: []string{"write", ".git/config", "--overwrite", "--content", "x\n"}, code: "FS_SANDBOX_DENIED"},
			} {
				start := time.Now()
				c := procCmd(helper, env, ws, append([]string{"openat2", errno, "dsh-fs"}, tc.args...)...)
				code, res, _, stderr := procRun(t, c, nil)
				switch {
				case tc.code == "" && (code != 0 || !res.OK):
					t.Errorf("%v under openat2 %s: exit %d, %+v (stderr %q); want success", tc.args, errno, code, res.Error, stderr)
				case tc.code != "" && (code == 0 || res.Error.Code != tc.code):
					t.Errorf("%v under openat2 %s: exit %d, %+v; want %s", tc.args, errno, code, res.Error, tc.code)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%v took %v", tc.args, d)
				}
			}
			if got := dirNames(t, ws); strings.Join(got, " ") != ".git f.txt out sub" {
				t.Errorf("workspace holds %v, want .git f.txt out sub", got)
			}
			if b, _ := os.ReadFile(ws + "/f.txt"); string(b) != "newer\n" {
				t.Errorf("f.txt = %q, want newer", b)
			}
			if b, _ := os.ReadFile(ws + "/.git/config"); string(b) != "[core]\n" {
				t.Errorf(".git/config = %q, want it unchanged", b)
			}
			if got := dirNames(t, out); len(got) != 0 {
				t.Errorf("outside holds %v, want nothing", got)
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
