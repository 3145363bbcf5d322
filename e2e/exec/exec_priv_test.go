//go:build unix

package exec

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// listenUnix serves name (a path, or "@name" for an abstract socket)
// from this test process, outside any session, answering every
// connection with "served"; it returns how many connections it took.
func listenUnix(t *testing.T, name string) func() int {
	t.Helper()
	l, err := net.Listen("unix", name)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", name, err)
	}
	t.Cleanup(func() { l.Close() })
	served := make(chan struct{}, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			served <- struct{}{}
			fmt.Fprintln(c, "served")
			c.Close()
		}
	}()
	return func() int { return len(served) }
}

// shellStatus is the line of /proc/self/status named key, as the shell
// of a session sees it.
func shellStatus(out, key string) string {
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestExecShellHoldsNoPrivilege (issue 21): CMD runs with no_new_privs
// and every capability set empty, bounding and ambient included, in a
// session started as root (uid 0 stays, the capabilities go) and in one
// of an ordinary user (whose user namespace held CAP_SYS_ADMIN for the
// mounts).
func TestExecShellHoldsNoPrivilege(t *testing.T) {
	harness.RequireLandlock(t)
	check := func(t *testing.T, out string, uid int) {
		t.Helper()
		if got := shellStatus(out, "Uid"); !strings.HasPrefix(got, strconv.Itoa(uid)+"\t") {
			t.Errorf("Uid: %q, want %d kept", got, uid)
		}
		for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			if got := shellStatus(out, set); got != "0000000000000000" {
				t.Errorf("%s: %q, want no capability", set, got)
			}
		}
		if got := shellStatus(out, "NoNewPrivs"); got != "1" {
			t.Errorf("NoNewPrivs: %q, want 1", got)
		}
	}
	t.Run("root", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root")
		}
		ws := t.TempDir()
		code, out, errs := execSh(t, execEnv(t, ws), ws, fenced(ws), "cat /proc/self/status; dsh-fs policy")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		check(t, out, 0)
		for _, want := range []string{`"privileges_held":true`, `"scopes_held":true`} {
			if !strings.Contains(out, want) {
				t.Errorf("policy inside the session: want %s in:\n%s", want, out)
			}
		}
	})
	t.Run("ordinary user", func(t *testing.T) {
		uid := agentUser(t)
		bin, dir := harness.UnprivilegedBin(t)
		ws := filepath.Join(dir, "ws")
		harness.WriteTree(t, ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
		chownTree(t, ws)
		c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "cat", "/proc/self/status")
		c.Dir = ws
		c.Env = agentExecEnv(t, bin, filepath.Join(dir, "etc"))
		asAgent(t, c)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("exec as %s: %v\n%s", agentUserName, err, out)
		}
		check(t, string(out), uid)
	})
}

// TestExecNoDeviceNodes (issue 21): a root shell made block and
// character device nodes in the workspace (Landlock granted make-block
// and make-char there, and the shell kept CAP_MKNOD), through which it
// could read a hidden deny_read file off the disk or write the disk raw.
// No device node can be made anywhere.
func TestExecNoDeviceNodes(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user never had CAP_MKNOD")
	}
	ws := t.TempDir()
	_, out, _ := execSh(t, execEnv(t, ws), ws, fenced(ws),
		`mknod disk b 7 0; echo "block=$?"; mknod mem c 1 3; echo "char=$?"; mkfifo fifo; echo "fifo=$?"`)
	for _, want := range []string{"block=1", "char=1", "fifo=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	for _, name := range []string{"disk", "mem"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the shell made the device node %s", name)
		}
	}
}

// TestExecReachesNothingOutside (issue 21): the shell signalled processes
// outside the session (SIGKILL of its own supervisor left the record
// behind) and connected to their abstract unix sockets. Landlock's scopes
// refuse both, for processes outside the session's domain; inside it
// they work as ever.
func TestExecReachesNothingOutside(t *testing.T) {
	harness.RequireLandlock(t)
	if sandbox.ActiveLayers(policy.Policy{}).LandlockABI < 6 {
		t.Skip("Landlock ABI 6 (scopes) is needed: this kernel has an older one")
	}
	ws := t.TempDir()
	outside := exec.Command("sleep", "60")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Process.Kill(); outside.Wait() })
	abstract := fmt.Sprintf("@dsh-fs-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	served := listenUnix(t, abstract)

	c := harness.Cmd(harness.Bin(t), execEnv(t, ws), ws, append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c",
		// The supervisor's pid is in the record the shell can read.
		`sup=$(sed -n 's/.*"supervisor_pid": *\([0-9]*\).*/\1/p' "$DSH_FS_SESSION")
		 kill -9 $OUTSIDE; echo "outside=$?"; kill -9 "$sup"; echo "supervisor=$? ($sup)"
		 unix-dial "$ABSTRACT"; echo "abstract=$?"
		 sleep 30 & kill -9 $!; echo "inside=$?"`)...)
	c.Env = append(c.Env, "OUTSIDE="+strconv.Itoa(outside.Process.Pid), "ABSTRACT="+abstract)
	outb, _ := c.CombinedOutput()
	out := string(outb)
	for _, want := range []string{"outside=1", "supervisor=1", "abstract=1", "inside=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	var ws4 syscall.WaitStatus
	if pid, _ := syscall.Wait4(outside.Process.Pid, &ws4, syscall.WNOHANG, nil); pid != 0 {
		t.Errorf("the process outside the session was ended from inside: %v", ws4)
	}
	if n := served(); n != 0 {
		t.Errorf("the abstract socket outside took %d connections from inside", n)
	}
	if code := c.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exec exited %d, want the shell's 0 (the supervisor survived):\n%s", code, out)
	}
}
