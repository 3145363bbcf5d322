//go:build unix

package exec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecDenialExplainsItself (issue 23): a model whose shell meets
// "Read-only file system" asks `dsh-fs stat PATH` once, and the answer
// names the layer and the rule there and the way forward: outside the
// writable roots, the mount layer's read-only tree and an escalated call
// or writable_roots; a protected path, its read-only bind and the
// protected entry. A path the shell may write says nothing more.
func TestExecDenialExplainsItself(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	harness.WriteTree(t, ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"})
	harness.WriteTree(t, out, map[string]string{"x.txt": "x\n"})
	env := execEnv(t, ws)
	script := `touch ` + out + `/x.txt 2>&1; dsh-fs stat ` + out + `/x.txt; echo; touch .git/config 2>&1; dsh-fs stat .git/config; echo; dsh-fs stat new.txt`
	code, stdout, stderr := execSh(t, env, ws, []string{"--cwd", ws, "--tmp=false"}, script)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var lines []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 5 {
		t.Fatalf("want 2 shell errors and 3 stat results, got %q", stdout)
	}
	for _, l := range []string{lines[0], lines[2]} {
		if !strings.Contains(l, "Read-only file system") {
			t.Errorf("the shell's write said %q, want Read-only file system", l)
		}
	}
	type stat struct {
		Writable   bool   `json:"writable"`
		Reason     string `json:"writable_reason"`
		Shell      string `json:"shell"`
		WayForward string `json:"way_forward"`
	}
	decode := func(l string) stat {
		var s stat
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		return s
	}
	outside, protected, fine := decode(lines[1]), decode(lines[3]), decode(lines[4])
	for _, c := range []struct {
		name string
		got  stat
		want []string
	}{
		{"outside", outside, []string{"outside the writable roots", "read-only tree", `"Read-only file system"`, "--escalate danger-full-access", "writable_roots"}},
		{"protected", protected, []string{"protected (" + ws + "/.git)", "bound read-only", "--escalate danger-full-access", "no setting lifts it"}},
	} {
		text := c.got.Shell + " | " + c.got.WayForward
		for _, w := range c.want {
			if c.got.Writable || !strings.Contains(text, w) {
				t.Errorf("%s: writable %v, %q; want it refused, naming %q", c.name, c.got.Writable, text, w)
			}
		}
	}
	if !fine.Writable || fine.Shell != "" || fine.WayForward != "" {
		t.Errorf("new.txt: %+v; want writable, with nothing to explain", fine)
	}
	// The agent's context block says so before anything is refused.
	if code, block, _ := execSh(t, env, ws, []string{"--cwd", ws, "--tmp=false"}, "dsh-fs policy --context"); code != 0 ||
		!strings.Contains(block, "shell: same fence (\"Read-only file system\"") || !strings.Contains(block, "dsh-fs stat PATH") {
		t.Errorf("policy --context inside the session (exit %d):\n%s\nwant the shell line", code, block)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git/config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}
