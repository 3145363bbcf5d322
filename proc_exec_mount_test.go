package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestExecMountLayer (issue 14): where exec may make a private mount
// namespace (root), the shell cannot write the protected .git of its
// workspace, nor read a deny_read folder, though Landlock lets it write
// the workspace; dsh-fs policy inside says both hold. The control runs
// the same shell without exec, where both get through.
func TestExecMountLayer(t *testing.T) {
	if ok, why := sandbox.MountLayer(); !ok {
		t.Skipf("the mount layer of dsh-fs exec is not available here (%s): protected paths and deny_read are not held for the shell", why)
	}
	if sandbox.ActiveLayers(sandbox.Policy{}).LandlockABI == 0 {
		t.Skip("no Landlock here: exec's kernel layer cannot be tested")
	}
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	writeTree(t, ws, map[string]string{
		".git/HEAD":        "ref: refs/heads/main\n",
		"sub/.git/config":  "[core]\n",
		"secrets/key":      "SECRET\n",
		"src/main.go":      "package main\n",
		".vscode/settings": "{}\n",
	})
	env := procEnv(t, ws)
	writeSystemConfig(t, env, "deny_read: ["+filepath.Join(ws, "secrets")+"/**]\n")
	script := `echo x >> .git/HEAD; echo "git=$?"; echo x > sub/.git/new; echo "subgit=$?"; echo x > .vscode/settings; echo "vscode=$?"; ` +
		`cat secrets/key; echo "key=$?"; echo x > src/new.go; echo "src=$?"`
	run := func(args ...string) string {
		c := exec.Command(procBin(t), args...)
		c.Env, c.Dir = env, ws
		out, _ := c.CombinedOutput()
		return string(out)
	}
	out := run("exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", script)
	for _, want := range []string{"git=2", "subgit=2", "vscode=2", "key=1", "src=0", "Read-only file system"} {
		if !strings.Contains(out, want) {
			t.Errorf("under exec, want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SECRET") {
		t.Errorf("the shell read the deny_read file:\n%s", out)
	}
	if got := readFile(t, filepath.Join(ws, ".git/HEAD")); got != "ref: refs/heads/main\n" {
		t.Errorf(".git/HEAD = %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "sub/.git/new")); !os.IsNotExist(err) {
		t.Errorf("sub/.git/new was written (%v)", err)
	}
	policy := run("exec", "--cwd", ws, "--tmp=false", "--", "dsh-fs", "policy")
	for _, want := range []string{`"protected_held":true`, `"deny_read_held":true`, `"read_only":["` + filepath.Join(ws, ".git")} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy inside, want %s in:\n%s", want, policy)
		}
	}

	// The control: the same shell without exec writes .git and reads
	// the secret.
	c := exec.Command("sh", "-c", script)
	c.Dir = ws
	ctl, _ := c.CombinedOutput()
	if !strings.Contains(string(ctl), "git=0") || !strings.Contains(string(ctl), "SECRET") {
		t.Errorf("without exec the shell should get through:\n%s", ctl)
	}
}
