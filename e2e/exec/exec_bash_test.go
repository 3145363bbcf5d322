//go:build unix

package exec

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecInteractiveBash (issue 14): an interactive bash on a real
// pseudo-terminal under exec, with job control: bash runs each command in
// a process group of its own and gives it the terminal, so the
// supervisor, asking the person at that terminal, must take the
// foreground for its question and give it back. The person types a
// command that escalates, answers y, and the write lands; then exit.
func TestExecInteractiveBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	ws, outside := harness.MCPLayout(t)
	master, slave := openPTYPair(t)
	defer slave.Close()
	env := append(harness.Env(t, ws), "TERM=dumb", "PS1=$ ")
	c := exec.Command(harness.Bin(t), "exec", "--cwd", ws, "--tmp=false", "--", bash, "--norc", "--noprofile", "-i")
	c.Env, c.Dir = env, ws
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	shown := readScreen(master)
	waitFor := func(s string) {
		t.Helper()
		deadline := time.Now().Add(harness.Timeout)
		for time.Now().Before(deadline) {
			if strings.Contains(shown(), s) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		c.Process.Kill()
		t.Fatalf("the terminal never showed %q; it shows:\n%s", s, shown())
	}
	waitFor("$ ")
	target := filepath.Join(outside, "x.txt")
	master.Write([]byte("dsh-fs write " + target + " --content hi --escalate danger-full-access >/dev/null; echo \"rc=$?\"\n"))
	waitFor("[y/N]")
	master.Write([]byte("y\n"))
	waitFor("rc=0")
	master.Write([]byte("exit 3\n"))
	select {
	case <-done:
	case <-time.After(harness.Timeout):
		c.Process.Kill()
		t.Fatal("bash did not exit")
	}
	if code := c.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exec exited %d, want bash's 3", code)
	}
	if got := harness.ReadFile(t, target); got != "hi" {
		t.Errorf("%s = %q, want the approved write", target, got)
	}
}
