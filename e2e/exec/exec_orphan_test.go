//go:build unix

package exec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecSupervisorKilled: a session never outlives its supervisor. A
// supervisor killed with SIGKILL (a harness's timeout, an OOM kill)
// cannot forward anything or end the session itself: its child gets
// SIGKILL from the kernel as its parent dies, and with it every process
// of the session's PID namespace. As root and as an ordinary user (the
// child in a user namespace of its own). Before: the session's init and
// its sleeps were still running 10 s after the supervisor was killed.
func TestExecSupervisorKilled(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	t.Run("root", func(t *testing.T) {
		t.Parallel()
		ws := sessionTemp(t)
		c := harness.Cmd(harness.Bin(t), execEnv(t, ws), ws, append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", orphanScript)...)
		checkSessionEndsWithSupervisor(t, c)
	})
	t.Run(agentUserName, func(t *testing.T) {
		t.Parallel()
		requireUserNamespaces(t)
		bin, dir := harness.UnprivilegedBin(t)
		ws := filepath.Join(dir, "ws")
		harness.WriteTree(t, ws, map[string]string{".keep": ""})
		chownTree(t, ws)
		c := exec.Command(bin, append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", orphanScript)...)
		c.Dir, c.Env = ws, agentExecEnv(t, bin, filepath.Join(dir, "etc"))
		asAgent(t, c)
		checkSessionEndsWithSupervisor(t, c)
	})
}

// orphanScript is a session's CMD that runs two sleeps, one in the
// background, as a shell's jobs do.
const orphanScript = "sleep 300 & sleep 300; wait"

// checkSessionEndsWithSupervisor starts the session c, kills its
// supervisor with SIGKILL once orphanScript's sleeps run, and wants
// every process of the session gone (harness.Timeout guards the wait).
func checkSessionEndsWithSupervisor(t *testing.T, c *exec.Cmd) {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	// The session's processes, once CMD's two sleeps run.
	var session []int
	deadline := time.Now().Add(harness.Timeout)
	for time.Now().Before(deadline) {
		session = descendants(c.Process.Pid)
		if countComm(session, "sleep") == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if countComm(session, "sleep") != 2 {
		c.Process.Kill()
		t.Fatalf("the session never started its two sleeps: %v", session)
	}
	c.Process.Kill()
	c.Wait()
	// A wait for their end, with a hang guard, not a speed claim.
	deadline = time.Now().Add(harness.Timeout)
	for time.Now().Before(deadline) && len(alive(session)) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if left := alive(session); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the session's processes %v outlived their supervisor by %v", left, harness.Timeout)
	}
}

// countComm counts the processes of pids whose command name is comm.
func countComm(pids []int, comm string) int {
	n := 0
	for _, pid := range pids {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(b)) == comm {
			n++
		}
	}
	return n
}

// alive returns those of pids that still run (a zombie has ended).
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// The state follows the command name's closing parenthesis.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}
