//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecPolicyBlockShort (issue 40): the sandbox:policy block a harness
// gives the model is at most 700 bytes inside a real session (it was
// 1,534 in the field trial) and still says in words what an agent needs:
// the workspace root, the mode, what else is writable, what stays
// read-only, how to escalate and who approves. policy --context
// --verbose keeps every glob, cache and line the short block drops.
func TestExecPolicyBlockShort(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "src", "github.com", "spf13", "cobra")
	harness.WriteTree(t, ws, map[string]string{"go.mod": "module example.com/cobra\n", ".git/HEAD": "ref: refs/heads/main\n"})
	env := execEnv(t, ws)
	code, out, errs := execSh(t, env, ws, []string{"--cwd", ws}, "dsh-fs policy --context; echo '=== verbose'; dsh-fs policy --context --verbose")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	short, verbose, ok := strings.Cut(out, "=== verbose\n")
	if !ok {
		t.Fatalf("no verbose block in %q", out)
	}
	if len(short) > 700 {
		t.Errorf("the block is %d bytes inside a session, want at most 700:\n%s", len(short), short)
	}
	for _, want := range []string{
		"<sandbox:policy>\n",
		"workspace root: " + ws + " (mode workspace-write)\n",
		"writable: the workspace root, /tmp; the rest is read-only",
		".git's config and hooks",
		"shell: same fence",
		"FS_SANDBOX_DENIED",
		"dsh-fs stat PATH",
		"--escalate MODE",
		"the person at dsh-fs exec's terminal approves",
		"dsh-fs policy --context --verbose",
		"</sandbox:policy>\n",
	} {
		if !strings.Contains(short, want) {
			t.Errorf("the short block does not say %q:\n%s", want, short)
		}
	}
	// What the short block drops, the verbose one keeps.
	for _, want := range []string{
		"writable roots: " + ws + ", /tmp\n",
		"protected, never written: .dsh-fs/**, .mcp.json, .vscode/**",
		"never written: config, config.worktree, hooks/, commondir",
		"shell: this dsh-fs exec session's shell is held to the same fence",
		"network (dsh-fs exec shell): off",
		"[sandbox: file access denied under workspace-write mode]",
		"escalation: only under a dsh-fs exec session, whose person approves",
	} {
		if !strings.Contains(verbose, want) {
			t.Errorf("the verbose block does not say %q:\n%s", want, verbose)
		}
	}
}

// TestExecWrongFolderNamesWorkspace (issue 40): after `cd ..` in the
// session's shell, `dsh-fs write notes.md` is refused naming the path as
// resolved and the workspace root first, in JSON and in text, and says a
// relative path is taken from the current folder; the escalation hint
// stays, after it. Nothing is written.
func TestExecWrongFolderNamesWorkspace(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "cobra")
	harness.WriteTree(t, ws, map[string]string{"go.mod": "module example.com/cobra\n"})
	env := execEnv(t, ws)
	code, out, errs := execSh(t, env, ws, fenced(ws), "cd .. && dsh-fs write notes.md --content x; echo; dsh-fs write notes.md --content x --output text 2>&1; true")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	lead := filepath.Join(parent, "notes.md") + " is outside the workspace root " + ws
	for _, want := range []string{
		`"message":"write: notes.md: ` + lead + `"`,
		`"workspace_root":"` + ws + `"`,
		`"hint":"a relative path is taken from the current folder (` + parent + `), not from the workspace root: name the file beneath ` + ws,
		`"escalation":{"mode":"danger-full-access"`,
		"dsh-fs: write: notes.md: " + lead + " (FS_SANDBOX_DENIED)\n",
		"\nhint: a relative path is taken from the current folder",
		"\nhint: this needs danger-full-access",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(parent, "notes.md")); err == nil {
		t.Errorf("notes.md was written outside the workspace")
	}
}
