package rawinit

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// anyArg, as refusing's argument, refuses the call whatever its
// arguments.
const anyArg = -1

// refusing is a seccomp program that makes the system call nr fail with
// errno, where its argument arg (0 to 5) is val, or always with anyArg;
// it allows every other call. The test skips on an architecture it does
// not know.
func refusing(t *testing.T, nr uint32, arg int, val uint32, errno syscall.Errno) []unix.SockFilter {
	t.Helper()
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		t.Skipf("no seccomp filter for %s here", runtime.GOARCH)
	}
	allow, refuse := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)}
	if arg == anyArg {
		return []unix.SockFilter{
			{Code: ld, K: 4}, // seccomp_data.arch
			{Code: jeq, K: arch, Jf: 3},
			{Code: ld, K: 0}, // seccomp_data.nr
			{Code: jeq, K: nr, Jf: 1},
			refuse, allow,
		}
	}
	return []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, K: arch, Jf: 5},
		{Code: ld, K: 0},
		{Code: jeq, K: nr, Jf: 3},
		{Code: ld, K: 16 + 8*uint32(arg)}, // the argument's low word (little-endian)
		{Code: jeq, K: val, Jf: 1},
		refuse, allow,
	}
}

// filtered installs prog on the calling thread alone (no TSYNC), which
// startOn's thread is, so the first process forked from it inherits it
// and the rest of the test binary does not.
func filtered(prog []unix.SockFilter) func() error {
	return func() error {
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
			return e
		}
		return nil
	}
}

// openFDs are the test process's descriptors and what each is, but the
// one that lists them.
func openFDs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the listing's own, closed by now
		}
		fds = append(fds, e.Name()+" "+target)
	}
	return fds
}

// lastCap is the kernel's last capability; the test skips where it
// cannot read it.
func lastCap(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		t.Skipf("no cap_last_cap: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Skipf("cap_last_cap %q: %v", b, err)
	}
	return n
}

// TestPrivilegesAndTerminalFailures: where the kernel refuses a step of
// the privileges' drop, of the terminal's, of the descriptors' or of the
// processes' and the kernel layers' set-up (a filter on the thread that
// forks, a stream that is no terminal, a descriptor not open), Start
// fails with fserr.IO in
// the words of the step's layer and its errno, and leaves no process and
// no descriptor behind.
func TestPrivilegesAndTerminalFailures(t *testing.T) {
	needRoot(t)
	last := lastCap(t)
	drop := func(t *testing.T, s *Spec) { s.Layers.DropPrivileges = &Privileges{LastCap: last} }
	for _, tc := range []struct {
		name string
		spec func(*testing.T, *Spec)
		// filter refuses a call of the first process's, when not nil.
		filter func(t *testing.T) []unix.SockFilter
		want   string
		errno  syscall.Errno
	}{
		{"bounding set", drop, func(t *testing.T) []unix.SockFilter {
			// EPERM leaves the bounding set as it is: any other errno fails.
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_CAPBSET_DROP, syscall.EINVAL)
		}, "privileges: drop a capability from the bounding set: invalid argument", syscall.EINVAL},
		{"securebits", drop, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_SECUREBITS, syscall.EPERM)
		}, "privileges: securebits: operation not permitted", syscall.EPERM},
		{"ambient", drop, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_CAP_AMBIENT, syscall.EPERM)
		}, "privileges: clear ambient capabilities: operation not permitted", syscall.EPERM},
		{"capset", func(t *testing.T, s *Spec) { s.Init = true; drop(t, s) }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_CAPSET, anyArg, 0, syscall.EPERM)
		}, "privileges: capset: operation not permitted", syscall.EPERM},
		{"no_new_privs", drop, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_NO_NEW_PRIVS, syscall.EPERM)
		}, "privileges: no_new_privs: operation not permitted", syscall.EPERM},
		{"parent death signal", func(t *testing.T, s *Spec) { s.ParentDeath = syscall.SIGKILL }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_PDEATHSIG, syscall.EPERM)
		}, "processes layer: parent death signal: operation not permitted", syscall.EPERM},
		{"not dumpable", func(t *testing.T, s *Spec) { s.Init = true }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_DUMPABLE, syscall.EPERM)
		}, "processes layer: not dumpable: operation not permitted", syscall.EPERM},
		{"fork of CMD", func(t *testing.T, s *Spec) {
			// Should the init go on without CMD, it ends with the thread.
			s.Init, s.ParentDeath = true, syscall.SIGKILL
		}, func(t *testing.T) []unix.SockFilter {
			// The init starts CMD with cmdClone's flags; the first
			// process is forked with CLONE_NEWPID, and no vfork.
			return refusing(t, unix.SYS_CLONE, 0, uint32(cmdClone), syscall.EAGAIN)
		}, "processes layer: fork: resource temporarily unavailable", syscall.EAGAIN},
		{"keyring", func(t *testing.T, s *Spec) { s.Layers.JoinKeyring = true }, func(t *testing.T) []unix.SockFilter {
			// ENOSYS and EPERM leave the keyring out: any other errno fails.
			return refusing(t, unix.SYS_KEYCTL, anyArg, 0, syscall.EACCES)
		}, "keyring: joining a session keyring of its own: permission denied", syscall.EACCES},
		{"no_new_privs before landlock", func(t *testing.T, s *Spec) { s.Layers.Rulesets = []int{writableOnly(t, t.TempDir())} },
			func(t *testing.T) []unix.SockFilter {
				return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_NO_NEW_PRIVS, syscall.EPERM)
			}, "kernel layer: no_new_privs: operation not permitted", syscall.EPERM},
		{"no_new_privs before the filters", func(t *testing.T, s *Spec) { s.Layers.Filters = [][]unix.SockFilter{refusingMkdir(t)} },
			func(t *testing.T) []unix.SockFilter {
				return refusing(t, unix.SYS_PRCTL, 0, unix.PR_SET_NO_NEW_PRIVS, syscall.EPERM)
			}, "kernel calls: no_new_privs: operation not permitted", syscall.EPERM},
		{"a descriptor table of its own", func(t *testing.T, s *Spec) {}, func(t *testing.T) []unix.SockFilter {
			// At the hand-over, while it still shares the caller's
			// table: its report is the failure, and nothing is closed.
			return refusing(t, unix.SYS_UNSHARE, 0, unix.CLONE_FILES, syscall.EPERM)
		}, "descriptors: a table of its own: operation not permitted", syscall.EPERM},
		{"a descriptor not open", func(t *testing.T, s *Spec) { s.Files[0] = 987 }, nil,
			"descriptors: placing them: bad file descriptor", syscall.EBADF},
		{"the others not closed", func(t *testing.T, s *Spec) {}, func(t *testing.T) []unix.SockFilter {
			// ENOSYS and EINVAL (a kernel without close_range or its
			// flag) fall back to closing one by one: any other fails.
			return refusing(t, unix.SYS_CLOSE_RANGE, anyArg, 0, syscall.EPERM)
		}, "descriptors: closing the others: operation not permitted", syscall.EPERM},
		{"setsid", func(t *testing.T, s *Spec) { s.Session = true }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_SETSID, anyArg, 0, syscall.EPERM)
		}, "terminal layer: setsid: operation not permitted", syscall.EPERM},
		{"a pipe as the terminal", func(t *testing.T, s *Spec) { s.Session, s.Ctty = true, 1 }, nil,
			"terminal layer: controlling terminal: inappropriate ioctl for device", syscall.ENOTTY},
		{"process group", func(t *testing.T, s *Spec) { s.Init = true }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_SETPGID, anyArg, 0, syscall.EPERM)
		}, "processes layer: process group: operation not permitted", syscall.EPERM},
		{"foreground", func(t *testing.T, s *Spec) { s.Init, s.Session, s.Ctty = true, true, 0 }, func(t *testing.T) []unix.SockFilter {
			return refusing(t, unix.SYS_IOCTL, 1, unix.TIOCSPGRP, syscall.EPERM)
		}, "terminal layer: foreground: operation not permitted", syscall.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := shell(t, "exit 0")
			if tc.name == "foreground" {
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Skipf("no pseudo-terminal here: %v", err)
				}
				t.Cleanup(func() { ptmx.Close(); tty.Close() })
				s.Files[0] = int(tty.Fd())
			}
			tc.spec(t, &s)
			var before func() error
			if tc.filter != nil {
				before = filtered(tc.filter(t))
			}
			fds := openFDs(t)
			p, err := startOn(t, s, nil, before)
			if err == nil {
				p.Wait()
				t.Fatal("started")
			}
			if err.Error() != tc.want || fserr.CodeOf(err) != fserr.IO || !errors.Is(err, tc.errno) {
				t.Errorf("error %q (%s), want %q (%s, %v)", err, fserr.CodeOf(err), tc.want, fserr.IO, tc.errno)
			}
			if _, werr := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); werr != syscall.ECHILD {
				t.Errorf("a child is left behind (wait4: %v)", werr)
			}
			if after := openFDs(t); !slices.Equal(after, fds) {
				t.Errorf("descriptors before Start:\n%s\nafter its failure:\n%s", strings.Join(fds, "\n"), strings.Join(after, "\n"))
			}
		})
	}
}

// TestUserNamespaceMapsRefused: where the new user namespace's maps
// cannot be written (the opens for writing refused by a filter on the
// calling thread, which writes them), Start fails with fserr.IO naming
// the user namespace, and the first process, which waits for its maps,
// is killed and reaped: no process, no descriptor left.
func TestUserNamespaceMapsRefused(t *testing.T) {
	needRoot(t)
	// os.WriteFile's open: O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC.
	const writeFlags = unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_CLOEXEC
	prog := refusing(t, unix.SYS_OPENAT, 2, writeFlags, syscall.EPERM)
	s, _ := shell(t, "exit 0")
	s.Clone, s.Init = unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWNET, true
	fds := openFDs(t)
	type started struct {
		p   *Process
		err error
	}
	c := make(chan started, 1)
	go func() {
		p, err := startOn(t, s, nil, filtered(prog))
		c <- started{p, err}
	}()
	var got started
	select {
	case got = <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("Start never returned: the first process, waiting for its maps, was not ended")
	}
	if got.err == nil {
		got.p.Wait()
		t.Fatal("started")
	}
	if !strings.HasPrefix(got.err.Error(), "user namespace: open /proc/") || !strings.HasSuffix(got.err.Error(), "/uid_map: operation not permitted") ||
		fserr.CodeOf(got.err) != fserr.IO {
		t.Errorf("error %q (%s), want \"user namespace: open /proc/…/uid_map: operation not permitted\" (%s)", got.err, fserr.CodeOf(got.err), fserr.IO)
	}
	if _, werr := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); werr != syscall.ECHILD {
		t.Errorf("a child is left behind (wait4: %v)", werr)
	}
	if after := openFDs(t); !slices.Equal(after, fds) {
		t.Errorf("descriptors before Start:\n%s\nafter its failure:\n%s", strings.Join(fds, "\n"), strings.Join(after, "\n"))
	}
}
