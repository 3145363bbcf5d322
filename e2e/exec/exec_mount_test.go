//go:build unix

package exec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// TestExecMountLayer (issue 14): where exec may make a private mount
// namespace (root), the shell cannot write the protected .git/config of
// its workspace (issue 23: the rest of .git is writable), nor read a deny_read folder, though Landlock lets it write
// the workspace; dsh-fs policy inside says both hold. The control runs
// the same shell without exec, where both get through.
func TestExecMountLayer(t *testing.T) {
	if ok, why := layout.MountLayer(); !ok {
		t.Skipf("the mount layer of dsh-fs exec is not available here (%s): protected paths and deny_read are not held for the shell", why)
	}
	if sandbox.ActiveLayers(policy.Policy{}).LandlockABI == 0 {
		t.Skip("no Landlock here: exec's kernel layer cannot be tested")
	}
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	harness.WriteTree(t, ws, map[string]string{
		".git/HEAD":        "ref: refs/heads/main\n",
		".git/config":      "[core]\n",
		"sub/.git/config":  "[core]\n",
		"secrets/key":      "SECRET\n",
		"src/main.go":      "package main\n",
		".vscode/settings": "{}\n",
	})
	env := harness.Env(t, ws)
	harness.WriteSystemConfig(t, env, "deny_read: ["+filepath.Join(ws, "secrets")+"/**]\n")
	script := `echo x >> .git/config; echo "git=$?"; echo x > sub/.git/config; echo "subgit=$?"; echo x > .vscode/settings; echo "vscode=$?"; ` +
		`cat secrets/key; echo "key=$?"; echo x > src/new.go; echo "src=$?"`
	run := func(args ...string) string {
		c := exec.Command(harness.Bin(t), args...)
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
	for _, config := range []string{".git/config", "sub/.git/config"} {
		if got := harness.ReadFile(t, filepath.Join(ws, config)); got != "[core]\n" {
			t.Errorf("%s = %q", config, got)
		}
	}
	pol := run("exec", "--cwd", ws, "--tmp=false", "--", "dsh-fs", "policy", "--verbose")
	for _, want := range []string{`"protected_held":true`, `"deny_read_held":true`, `"read_only":["`, `"` + filepath.Join(ws, ".git", "config") + `"`} {
		if !strings.Contains(pol, want) {
			t.Errorf("policy inside, want %s in:\n%s", want, pol)
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

// TestExecNoRuntimeFolder (issues 14, 21): a user that is not root
// needs its private runtime folder, /run/user/UID, for the record: with
// $XDG_RUNTIME_DIR elsewhere (a record is trusted only in
// /run/user/UID/dsh-fs, never where a variable says), exec fails with
// FS_IO and CMD never runs. Without the variable the folder is found by
// the uid (TestExecUserWithoutXDGRuntimeDir); a missing or unsafe one is
// refused (TestUserRuntimeFolder, internal/session/wire).
func TestExecNoRuntimeFolder(t *testing.T) {
	uid := agentUser(t)
	bin, dir := harness.UnprivilegedBin(t)
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	chownTree(t, ws)
	open := filepath.Join(dir, "open")
	os.MkdirAll(open, 0o777)
	os.Chmod(open, 0o777)
	own := filepath.Join(dir, "own")
	os.MkdirAll(own, 0o700)
	chownTree(t, own)
	runtime := fmt.Sprintf("/run/user/%d", uid)
	for _, tc := range []struct{ xdg, want string }{
		{open, "not " + runtime},
		// Private and the user's own, but not where records are read.
		{own, "not " + runtime},
	} {
		c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", "touch ran")
		c.Dir = ws
		c.Env = []string{"PATH=/usr/bin:/bin", "DSH_FS_TEST_SYSTEM_DIR=" + filepath.Join(dir, "etc"), "DSH_FS_TEST_HOME=/nonexistent", "GORACE=atexit_sleep_ms=0"}
		if tc.xdg != "" {
			c.Env = append(c.Env, "XDG_RUNTIME_DIR="+tc.xdg)
		}
		asAgent(t, c)
		out, _ := c.CombinedOutput()
		if c.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), `"code":"FS_IO"`) || !strings.Contains(string(out), tc.want) {
			t.Errorf("XDG_RUNTIME_DIR=%q: exit %d, want 1 and FS_IO saying %q:\n%s", tc.xdg, c.ProcessState.ExitCode(), tc.want, out)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); !os.IsNotExist(err) {
			t.Errorf("XDG_RUNTIME_DIR=%q: CMD ran", tc.xdg)
		}
	}
}

// TestExecMountLayerUnprivileged (issue 14): a user that is not root gets
// the mount layer too, in a user namespace that maps it to itself: the
// shell keeps its uid and no capability, and cannot write .git/config.
func TestExecMountLayerUnprivileged(t *testing.T) {
	requireUserNamespaces(t)
	bin, ws, system := unprivilegedSession(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "src/a.go": "package a\n"})
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c",
		`id -u; grep CapEff /proc/self/status; echo x >> .git/config; echo "git=$?"; echo x > src/b.go; echo "src=$?"; dsh-fs policy --verbose`)
	c.Dir = ws
	c.Env = agentExecEnv(t, bin, system)
	asAgent(t, c)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("exec as an unprivileged user: %v\n%s", err, out)
	}
	for _, want := range []string{strconv.Itoa(agentUser(t)) + "\n", "CapEff:\t0000000000000000", "Read-only file system", "git=2", "src=0", `"protected_held":true`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if got := harness.ReadFile(t, filepath.Join(ws, ".git/config")); got != "[core]\n" {
		t.Errorf(".git/config = %q", got)
	}
}

// TestExecShellKeepsNoCapability (issue 14): the capabilities that the
// mount layer needs are a thread's, and Go may run the code that clears
// them on one thread and the execve of CMD on another. Then the shell of
// a user that is not root kept CAP_SYS_ADMIN in its namespace, enough to
// unmount the read-only binds over .git. Many sessions at once make that
// likely; each shell must have none.
func TestExecShellKeepsNoCapability(t *testing.T) {
	requireUserNamespaces(t)
	bin, ws, system := unprivilegedSession(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	const sessions, atOnce = 64, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	kept := 0
	slots := make(chan struct{}, atOnce)
	for range sessions {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "grep", "CapEff", "/proc/self/status")
			c.Dir = ws
			c.Env = agentExecEnv(t, bin, system)
			asAgent(t, c)
			out, err := c.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("exec: %v\n%s", err, out)
			case !strings.Contains(string(out), "CapEff:\t0000000000000000"):
				kept++
				if kept == 1 {
					t.Errorf("a shell kept a capability: %s", out)
				}
			}
		}()
	}
	wg.Wait()
	if kept > 0 {
		t.Errorf("%d of %d shells kept a capability", kept, sessions)
	}
}

// requireUserNamespaces skips a test of a session as the ordinary user
// where there is none to run (not root), or where the kernel gives it no
// user namespace for the mount layer.
func requireUserNamespaces(t *testing.T) {
	t.Helper()
	agentUser(t)
	if n, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err != nil || strings.TrimSpace(string(n)) == "0" {
		t.Skip("this kernel allows no unprivileged user namespace: the mount layer needs root here")
	}
}

// unprivilegedSession readies a session of the ordinary user of
// agentUser (uid 23456, a real user: not the overflow uid, which would
// hide how root's files show in its user namespace): this test binary as
// its dsh-fs (harness.UnprivilegedBin), a workspace ws holding files, owned by
// that user, and an empty folder, root's, for the trusted system files.
// Its record goes to the user's runtime folder (agentExecEnv).
func unprivilegedSession(t *testing.T, files map[string]string) (bin, ws, system string) {
	t.Helper()
	bin, dir := harness.UnprivilegedBin(t)
	ws = filepath.Join(dir, "ws")
	harness.WriteTree(t, ws, files)
	chownTree(t, ws)
	system = filepath.Join(dir, "etc")
	os.MkdirAll(system, 0o755)
	return bin, ws, system
}

// agentSession runs script in a dsh-fs exec session of the ordinary
// user (unprivilegedSession's), and returns its combined output.
func agentSession(t *testing.T, bin, ws, system, script string) string {
	t.Helper()
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", script)
	c.Dir = ws
	c.Env = agentExecEnv(t, bin, system)
	asAgent(t, c)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("exec as %s: %v\n%s", agentUserName, err, out)
	}
	return string(out)
}

// TestExecFileToolRealUser (issue 21): inside a session of a real
// ordinary user, with the mount layer (a user namespace that maps that
// user alone), the file tool works: the record, the user's, and the
// trusted files, root's, which show as the overflow uid there, are
// judged as the kernel maps them. Before, every call inside was refused:
// the record's folders "owned by uid 65534, neither root nor this user".
func TestExecFileToolRealUser(t *testing.T) {
	requireUserNamespaces(t)
	if sandbox.ActiveLayers(policy.Policy{}).LandlockABI == 0 {
		t.Skip("no Landlock here: exec's kernel layer cannot be tested")
	}
	bin, ws, system := unprivilegedSession(t, map[string]string{"src/a.go": "package a\n", ".git/HEAD": "ref: refs/heads/main\n"})
	// A trusted file inside the session is root's: the managed
	// requirements, read by every call.
	harness.WriteTree(t, system, map[string]string{"requirements.yaml": "max_mode: workspace-write\n"})
	out := agentSession(t, bin, ws, system,
		`id -u; stat -c 'root shows as %u' /; dsh-fs stat src/a.go; echo "stat=$?"; dsh-fs write src/b.go --content 'package a'; echo "write=$?"; dsh-fs policy --verbose; echo "policy=$?"`)
	for _, want := range []string{
		strconv.Itoa(agentUser(t)) + "\n",
		"root shows as 65534",
		`"ok":true,"op":"stat","path":"src/a.go"`, "stat=0",
		`"ok":true,"op":"write","path":"src/b.go"`, "write=0",
		`"ok":true,"op":"policy"`, `"protected_held":true`, "policy=0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "session record not trusted") {
		t.Errorf("the session's own record was refused:\n%s", out)
	}
	wantContent(t, filepath.Join(ws, "src/b.go"), "package a")
}
