//go:build unix

package exec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// startScript prints, from inside a session, pid 1's command line and
// whether its environment can be read.
const startScript = `tr '\0' ' ' < /proc/1/cmdline | tr '\n' ' '; echo; ` +
	`if cat /proc/1/environ >/dev/null 2>&1; then echo environ=read; else echo environ=refused; fi`

// TestExecStartsInOneGoProcess: the session's first process (pid 1
// inside) is forked from the supervisor itself, whose command line it
// shows: no second dsh-fs is started, as root or as an ordinary user,
// whose mount layer's user namespace the first process takes as it is
// forked. It is a copy of its parent's memory that no process of the
// session may read: its environment is refused.
func TestExecStartsInOneGoProcess(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	check := func(t *testing.T, out, wantPid1 string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("want two lines, got %q", out)
		}
		if !strings.Contains(lines[0], wantPid1) || strings.Contains(lines[0], childArg) {
			t.Errorf("pid 1 is %q, want a fork of %q", lines[0], wantPid1)
		}
		if lines[1] != "environ=refused" {
			t.Errorf("pid 1's environment: %s, want refused", lines[1])
		}
	}
	t.Run("root", func(t *testing.T) {
		t.Parallel()
		ws := sessionTemp(t)
		c := harness.Cmd(harness.Bin(t), execEnv(t, ws), ws, append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", startScript)...)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		check(t, string(out), "exec --cwd "+ws)
	})
	t.Run(agentUserName, func(t *testing.T) {
		t.Parallel()
		requireUserNamespaces(t)
		bin, dir := harness.UnprivilegedBin(t)
		ws := filepath.Join(dir, "ws")
		harness.WriteTree(t, ws, map[string]string{".keep": ""})
		chownTree(t, ws)
		c := exec.Command(bin, append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", startScript)...)
		c.Dir, c.Env = ws, agentExecEnv(t, bin, filepath.Join(dir, "etc"))
		asAgent(t, c)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		check(t, string(out), "exec --cwd "+ws)
	})
}

// childArg is the argument exec starts its child with.
const childArg = "__exec-child"

// TestExecManyWritableRootsOrdinaryUser: an ordinary user's session whose
// mount layer has more writable folders than the first process's
// compiled mounts hold (one register each) still starts, from exec's
// child, and writes in the last of them.
func TestExecManyWritableRootsOrdinaryUser(t *testing.T) {
	harness.RequireLandlock(t)
	requireUserNamespaces(t)
	t.Parallel()
	bin, dir := harness.UnprivilegedBin(t)
	ws := filepath.Join(dir, "ws")
	tree := map[string]string{".keep": ""}
	args := append([]string{"exec"}, fenced(ws)...)
	const roots = 70
	for i := range roots {
		tree[fmt.Sprintf("r%d/.keep", i)] = ""
	}
	harness.WriteTree(t, ws, tree)
	for i := range roots {
		args = append(args, "--writable-root", filepath.Join(ws, fmt.Sprintf("r%d", i)))
	}
	chownTree(t, ws)
	last := filepath.Join(ws, fmt.Sprintf("r%d", roots-1), "x")
	c := exec.Command(bin, append(args, "--", "sh", "-c", "echo y >"+last)...)
	c.Dir, c.Env = ws, agentExecEnv(t, bin, filepath.Join(dir, "etc"))
	asAgent(t, c)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if b, err := os.ReadFile(last); err != nil || string(b) != "y\n" {
		t.Errorf("the last writable root: %q %v", b, err)
	}
}
