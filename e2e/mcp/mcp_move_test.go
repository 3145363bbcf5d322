package mcp

// Issue 22: a move renames everything beneath what it moves. A folder
// that holds the trusted config, a deny_read secret or a protected file
// is refused on either side of a move, so no sequence of moves and
// writes reaches what the fence guards by its path.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpStartHome starts dsh-fs mcp with home, the user's home folder of the
// test (DSH_FS_TEST_HOME), as its one allowed folder: the drop-in
// `dsh-fs mcp ~`. system, when not "", is the trusted system config.
func mcpStartHome(t *testing.T, home, system string) (*mcp.ClientSession, []string) {
	t.Helper()
	var env []string
	for _, kv := range harness.MCPEnv(t, home) {
		switch {
		case strings.HasPrefix(kv, "HOME="):
			kv = "HOME=" + home
		case strings.HasPrefix(kv, "DSH_FS_TEST_HOME="):
			kv = "DSH_FS_TEST_HOME=" + home
		}
		env = append(env, kv)
	}
	if system != "" {
		harness.WriteSystemConfig(t, env, system)
	}
	c := exec.Command(harness.Bin(t), "mcp", "--tmp=false", home)
	c.Env, c.Dir, c.Stderr = env, home, os.Stderr
	return harness.MCPConnect(t, c, nil), env
}

// mcpMustFail calls a tool that must be refused with every one of want
// in its text.
func mcpMustFail(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any, want ...string) {
	t.Helper()
	res := harness.MCPCall(t, s, tool, args)
	got := harness.MCPText(res)
	if !res.IsError {
		t.Errorf("%s %v succeeded: %s", tool, args, got)
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s %v: %s, want %q in it", tool, args, got, w)
		}
	}
}

// TestMcpMoveTrustedConfigFolder: the review's three calls over
// `dsh-fs mcp ~`. Moving the folder of the user's trusted config away,
// writing the config there and moving it back rewrote
// ~/.config/dsh-fs/config.yaml; a CLI --escalate then wrote outside every
// root with no one asked. Each move of a folder holding (or that would
// hold) a trusted config path is refused.
func TestMcpMoveTrustedConfigFolder(t *testing.T) {
	home, outside := harness.CanonicalTemp(t), harness.CanonicalTemp(t)
	config := filepath.Join(home, ".config", "dsh-fs", "config.yaml")
	const trusted = "max_mode: workspace-write\n"
	harness.WriteTree(t, home, map[string]string{".config/dsh-fs/config.yaml": trusted, "notes.txt": "n\n"})
	s, env := mcpStartHome(t, home, "")

	mcpMustFail(t, s, "move_file", map[string]any{"source": ".config/dsh-fs", "destination": ".config/dx"},
		"FS_SANDBOX_DENIED", "protected", config)
	// Had the first move passed, the rest of the review's calls.
	harness.MCPCall(t, s, "write_file", map[string]any{"path": ".config/dx/config.yaml", "content": "max_mode: danger-full-access\napproval: trust\n"})
	harness.MCPCall(t, s, "move_file", map[string]any{"source": ".config/dx", "destination": ".config/dsh-fs"})
	if got := harness.ReadFile(t, config); got != trusted {
		t.Fatalf("the trusted config was rewritten: %q", got)
	}
	// Any folder above it, too.
	mcpMustFail(t, s, "move_file", map[string]any{"source": ".config", "destination": "cfg"},
		"FS_SANDBOX_DENIED", "protected", config)

	// The destination side: a folder made elsewhere, holding a file
	// named like the trusted config, is not moved into its place.
	os.RemoveAll(filepath.Join(home, ".config", "dsh-fs"))
	harness.WriteTree(t, home, map[string]string{"staged/config.yaml": "approval: trust\n"})
	mcpMustFail(t, s, "move_file", map[string]any{"source": "staged", "destination": ".config/dsh-fs"},
		"FS_SANDBOX_DENIED", "protected", config)
	if _, err := os.Lstat(config); !os.IsNotExist(err) {
		t.Fatalf("a config was moved into the trusted path: %v", err)
	}

	// An ordinary folder still moves.
	if res := harness.MCPCall(t, s, "move_file", map[string]any{"source": "staged", "destination": "plain"}); res.IsError {
		t.Errorf("an ordinary folder: %s", harness.MCPText(res))
	}

	// And the CLI asks before it writes outside.
	target := filepath.Join(outside, "x.txt")
	code, _, _, _ := harness.Run(t, harness.Cmd(harness.Bin(t), env, home, "write", "--escalate", "danger-full-access", target, "--content", "x"), nil)
	if _, err := os.Lstat(target); err == nil || code == 0 {
		t.Errorf("the CLI wrote outside every root (exit %d)", code)
	}
}

// TestMcpMoveDenyReadParent: a deny_read secret is not read by moving
// the folder above it out of the glob, for an anchored folder entry and
// for a relative glob of two parts. A move that keeps the secret under
// its glob is allowed, and the secret stays unreadable.
func TestMcpMoveDenyReadParent(t *testing.T) {
	home := harness.CanonicalTemp(t)
	harness.WriteTree(t, home, map[string]string{
		"area/private/key.txt": "hunter2\n",
		"box/vault/id.key":     "hunter3\n",
		"box/vault/plain.txt":  "p\n",
	})
	system := "deny_read: [\"" + filepath.Join(home, "area", "private") + "\", \"vault/*.key\"]\n"
	s, _ := mcpStartHome(t, home, system)

	mcpMustFail(t, s, "move_file", map[string]any{"source": "area", "destination": "open"}, "FS_SANDBOX_DENIED", "deny_read")
	mcpMustFail(t, s, "move_file", map[string]any{"source": "box/vault", "destination": "box/shown"}, "FS_SANDBOX_DENIED", "deny_read")
	// The destination side: a folder moved into the anchored entry's
	// place would take its name, and what reads it would be denied,
	// but a folder the glob would newly cover is a folder the model
	// could then not read back: refused too, saying why.
	harness.WriteTree(t, home, map[string]string{"mine/x.key": "mine\n"})
	mcpMustFail(t, s, "move_file", map[string]any{"source": "mine", "destination": "vault"}, "FS_SANDBOX_DENIED", "deny_read")

	for _, p := range []string{"open/private/key.txt", "box/shown/id.key"} {
		res := harness.MCPCall(t, s, "read_text_file", map[string]any{"path": p})
		if got := harness.MCPText(res); strings.Contains(got, "hunter") {
			t.Errorf("%s read the secret: %s", p, got)
		}
	}

	// Moving box keeps box2/vault/id.key under "vault/*.key".
	if res := harness.MCPCall(t, s, "move_file", map[string]any{"source": "box", "destination": "box2"}); res.IsError {
		t.Fatalf("a move that keeps the secret denied: %s", harness.MCPText(res))
	}
	mcpMustFail(t, s, "read_text_file", map[string]any{"path": "box2/vault/id.key"}, "deny_read")
}

// TestMcpMoveProtectedExtraParent: a protected_extra file is not
// overwritten by moving its folder away, writing it, and moving the
// folder back; nor is a folder made elsewhere moved into its place.
func TestMcpMoveProtectedExtraParent(t *testing.T) {
	home := harness.CanonicalTemp(t)
	const kept = "guarded: true\n"
	harness.WriteTree(t, home, map[string]string{"conf/settings.yaml": kept, "conf/other.txt": "o\n"})
	s, _ := mcpStartHome(t, home, "protected_extra: [\"conf/settings.yaml\"]\n")

	mcpMustFail(t, s, "move_file", map[string]any{"source": "conf", "destination": "away"}, "FS_SANDBOX_DENIED", "protected", "conf/settings.yaml")
	harness.MCPCall(t, s, "write_file", map[string]any{"path": "away/settings.yaml", "content": "guarded: false\n"})
	harness.MCPCall(t, s, "move_file", map[string]any{"source": "away", "destination": "conf"})
	if got := harness.ReadFile(t, filepath.Join(home, "conf", "settings.yaml")); got != kept {
		t.Fatalf("the protected file was overwritten: %q", got)
	}

	// The destination side, with the protected file gone.
	os.RemoveAll(filepath.Join(home, "conf"))
	harness.WriteTree(t, home, map[string]string{"made/settings.yaml": "guarded: false\n"})
	mcpMustFail(t, s, "move_file", map[string]any{"source": "made", "destination": "conf"}, "FS_SANDBOX_DENIED", "protected", "conf/settings.yaml")
	if _, err := os.Lstat(filepath.Join(home, "conf")); !os.IsNotExist(err) {
		t.Fatalf("a folder was moved over the protected path: %v", err)
	}
}
