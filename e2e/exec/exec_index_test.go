//go:build unix

package exec

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecNextSessionProtectsPastAnyCount (issues 37, 38): what one
// session leaves behind never decides what the next one protects. The
// person's nested repository zz/.git and secret zz/.env exist from the
// start; a first session leaves 20,001 files that sort before zz/, and
// plants a repository deep in a folder that existed. The next session
// still cannot write zz/.git/config nor read zz/.env, cannot write the
// planted repository's config, and names no folder as partial. Before
// the roots' tree index the plan's walk stopped at 20,000 entries: the
// second session read the secret and wrote the config.
func TestExecNextSessionProtectsPastAnyCount(t *testing.T) {
	requireMountLayer(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	harness.WriteTree(t, ws, map[string]string{
		"zz/.git/HEAD": "ref: refs/heads/main\n", "zz/.git/objects/.keep": "", "zz/.git/refs/.keep": "",
		"zz/.git/config": "[core]\n", "zz/.env": "SECRET-ENV\n", "a/b/c/code.go": "package c\n",
	})
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "deny_read: ['**/.env']\n")
	// Each session does the work of many processes: the first makes
	// 20,001 files, the next index them (cold, then warm). A loaded
	// 2-core machine under -race took 6 to 8 s for each; one process's
	// 20 s guard left too little.
	const bound = 4 * harness.Timeout
	// The first session: leave the files, plant a repository.
	_, out, errs := execShWithin(t, env, ws, fenced(ws),
		`i=0; while [ $i -lt 20001 ]; do : > "a$i"; i=$((i+1)); done; `+
			`mkdir -p a/b/c/.git/objects a/b/c/.git/refs && echo 'ref: refs/heads/main' > a/b/c/.git/HEAD && `+
			`echo '[core]' > a/b/c/.git/config; echo "planted=$?"`, bound)
	if !strings.Contains(out, "planted=0") {
		t.Fatalf("the first session could not leave its files:\n%s%s", out, errs)
	}
	// The next sessions: cold for what changed, then warm.
	for _, run := range []string{"next", "warm"} {
		_, out, errs = execShWithin(t, env, ws, fenced(ws),
			`cat zz/.env; echo "cat=$?"; echo x >> zz/.git/config; echo "git=$?"; `+
				`echo x >> a/b/c/.git/config; echo "planted=$?"; echo x > new.go; echo "src=$?"; dsh-fs policy --verbose`, bound)
		if strings.Contains(out+errs, "SECRET") {
			t.Errorf("%s session read zz/.env:\n%s", run, out)
		}
		for _, want := range []string{"git=2", "planted=2", "src=0", `"deny_read_held":true`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s session: want %q in:\n%s%s", run, want, out, errs)
			}
		}
		if partial := mountsPartial(t, out); slices.ContainsFunc(partial, func(p string) bool { return strings.HasPrefix(p, ws) }) {
			t.Errorf("%s session names the workspace as not searched: %q", run, partial)
		}
	}
	for _, f := range []string{"zz/.git/config", "a/b/c/.git/config"} {
		if got := harness.ReadFile(t, filepath.Join(ws, f)); got != "[core]\n" {
			t.Errorf("%s = %q", f, got)
		}
	}
}

// TestExecUnreadableFolderHidden (issue 37): a folder of the workspace
// the supervisor cannot read (here the ordinary user's own, chmod 0311:
// it can be passed through by name but not listed) is never taken as
// empty. The shell cannot reach what it holds, the .env deny_read names
// nor the repository's config, and policy names it. Before, the plan
// read it as empty and the shell read locked/.env by its name.
func TestExecUnreadableFolderHidden(t *testing.T) {
	requireUserNamespaces(t)
	harness.RequireLandlock(t)
	bin, ws, system := unprivilegedSession(t, map[string]string{
		"locked/.env": "SECRET-ENV\n", "locked/.git/HEAD": "ref: refs/heads/main\n", "locked/.git/objects/.keep": "",
		"locked/.git/refs/.keep": "", "locked/.git/config": "[core]\n", "src/a.go": "package a\n",
	})
	harness.WriteTree(t, system, map[string]string{"config.yaml": "deny_read: ['**/.env']\n"})
	locked := filepath.Join(ws, "locked")
	if err := os.Chmod(locked, 0o311); err != nil {
		t.Fatal(err)
	}
	// The control: outside a session the user reads the secret by name.
	c := exec.Command("cat", filepath.Join(locked, ".env"))
	asAgent(t, c)
	if out, _ := c.CombinedOutput(); !strings.Contains(string(out), "SECRET") {
		t.Fatalf("control: the user cannot read locked/.env outside a session: %s", out)
	}
	out := agentSession(t, bin, ws, system,
		`cat locked/.env; echo "cat=$?"; echo x >> locked/.git/config; echo "git=$?"; echo x > src/b.go; echo "src=$?"; dsh-fs policy --verbose`)
	if strings.Contains(out, "SECRET") {
		t.Errorf("the shell read locked/.env:\n%s", out)
	}
	for _, want := range []string{"cat=1", "git=2", "src=0", "could not read them: " + locked} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	os.Chmod(locked, 0o755)
	if got := harness.ReadFile(t, filepath.Join(locked, ".git/config")); got != "[core]\n" {
		t.Errorf("locked/.git/config = %q", got)
	}
}

// mountsPartial is the mount plan's partial list in the output of
// `dsh-fs policy --verbose` inside a session.
func mountsPartial(t *testing.T, out string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, `{"ok":true,"op":"policy"`) {
			continue
		}
		var p struct {
			Shell struct {
				Mounts struct {
					Partial []string `json:"partial"`
				} `json:"mounts"`
			} `json:"shell"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("policy: %v\n%s", err, line)
		}
		return p.Shell.Mounts.Partial
	}
	t.Fatalf("no policy line in:\n%s", out)
	return nil
}
