//go:build unix

package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecLargeWorkspaceProtected (issue 38, Show): in a workspace of
// 50,000 files every protection still holds and nothing is left
// unchecked for its size, in a first session (the tree index made cold)
// and the next (the index warm, the git guard's end walk taking the
// unchanged folders' listings from it). The person's nested repository
// zz/.git cannot be written, the deny_read file deny/.env and its hard
// link d42/link.txt are both hidden (the shell reads nothing of the
// secret through either), policy names nothing as partial; a repository each session plants deep in a folder that
// existed (dNN/sub/.git, core.fsmonitor) is neutralized when it ends,
// and the person's git there runs nothing. Before the roots' tree index
// the plan's walk and the guard's stopped at 20,000 entries: the
// workspace was named not_checked, and the secret and the config were
// reachable past the budget (TestExecNextSessionProtectsPastAnyCount,
// TestExecGitGuardPastBudget).
func TestExecLargeWorkspaceProtected(t *testing.T) {
	requireMountLayer(t)
	requireGit(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	harness.WriteTree(t, ws, map[string]string{
		"zz/.git/HEAD": "ref: refs/heads/main\n", "zz/.git/objects/.keep": "", "zz/.git/refs/.keep": "",
		"zz/.git/config": "[core]\n", "deny/.env": "SECRET-ENV\n",
	})
	for d := 0; d < 100; d++ {
		dir := filepath.Join(ws, fmt.Sprintf("d%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < 500; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte("package d\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Link(filepath.Join(ws, "deny/.env"), filepath.Join(ws, "d42/link.txt")); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "PWNED")
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	harness.WriteSystemConfig(t, env, "deny_read: ['**/.env']\n")
	for _, s := range []struct{ run, plant string }{{"cold", "d10/sub"}, {"warm", "d77/sub"}} {
		code, out, errs := execSh(t, env, ws, fenced(ws),
			`cat deny/.env; echo "cat=$?"; cat d42/link.txt; echo x >> zz/.git/config; echo "git=$?"; `+
				`p=`+s.plant+`; mkdir -p $p/.git/objects $p/.git/refs && echo 'ref: refs/heads/main' > $p/.git/HEAD && `+
				`printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" > $p/.git/config && echo planted; dsh-fs policy --verbose`)
		if code != 0 || !strings.Contains(out, "planted") {
			t.Fatalf("%s session: exit %d\n%s%s", s.run, code, out, errs)
		}
		if strings.Contains(out+errs, "SECRET") {
			t.Errorf("%s session read the secret:\n%s", s.run, out)
		}
		for _, want := range []string{"git=2", `"deny_read_held":true`, "hidden_files\":[\"" + ws + "/d42/link.txt\",\"" + ws + "/deny/.env\"]"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s session: want %q in:\n%s%s", s.run, want, out, errs)
			}
		}
		if partial := mountsPartial(t, out); slices.ContainsFunc(partial, func(p string) bool { return strings.HasPrefix(p, ws) }) {
			t.Errorf("%s session names the workspace as not searched: %q", s.run, partial)
		}
		wantNeutralized(t, errs, filepath.Join(ws, s.plant, ".git"), "config: core.fsmonitor")
		wantNothingUnchecked(t, errs)
		personGit(t, filepath.Join(ws, s.plant), "status")
		wantAbsent(t, mark)
	}
	if got := harness.ReadFile(t, filepath.Join(ws, "zz/.git/config")); got != "[core]\n" {
		t.Errorf("zz/.git/config = %q", got)
	}
}
