//go:build unix

package exec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecProtectedBeforeTheyExist: protected paths hold through a
// symlink made before the session and where they do not exist yet. With
// .codex a symlink to decoy-codex/, a write to .codex/config.toml does
// not reach decoy-codex; .git/config cannot be written into an empty
// .git/, nor .vscode/settings.json made where .vscode is missing, nor
// .mcp.json made; `git init` in a new folder still works; and the
// placeholders that held the missing paths are gone after the session.
func TestExecProtectedBeforeTheyExist(t *testing.T) {
	forEachUser(t, func(t *testing.T, s *socketSession) {
		for _, d := range []string{"decoy-codex", ".git"} {
			os.Mkdir(filepath.Join(s.ws, d), 0o755)
			s.ownBy(filepath.Join(s.ws, d))
		}
		if err := os.Symlink("decoy-codex", filepath.Join(s.ws, ".codex")); err != nil {
			t.Fatal(err)
		}
		os.Lchown(filepath.Join(s.ws, ".codex"), agentUIDIf(s), agentUIDIf(s))
		script := `echo x > .codex/config.toml; echo "codex=$?"
echo '[core]' > .git/config; echo "gitconfig=$?"
mkdir -p .vscode; echo '{}' > .vscode/settings.json; echo "vscode=$?"
echo '{}' > .mcp.json; echo "mcp=$?"
echo ok > plain.txt; echo "plain=$?"
`
		_, gitErr := exec.LookPath("git")
		if gitErr == nil {
			script += `git init -q sub && git -C sub config user.name x && echo "gitinit=$?"` + "\n"
		}
		out := s.run(t, []string{"--tmp=false"}, script)
		for _, p := range []string{"decoy-codex/config.toml", ".git/config", ".vscode/settings.json", ".mcp.json"} {
			if _, err := os.Lstat(filepath.Join(s.ws, p)); err == nil {
				t.Errorf("the session wrote the protected %s:\n%s", p, out)
			}
		}
		// The placeholders are gone with the session.
		for _, p := range []string{".vscode", ".git/hooks", ".claude"} {
			if _, err := os.Lstat(filepath.Join(s.ws, p)); err == nil {
				t.Errorf("%s is left after the session:\n%s", p, out)
			}
		}
		if !strings.Contains(out, "plain=0") {
			t.Errorf("the session could not write an ordinary file:\n%s", out)
		}
		if gitErr == nil && (!strings.Contains(out, "gitinit=0") || !fileExists(filepath.Join(s.ws, "sub", ".git", "config"))) {
			t.Errorf("git init in a new folder failed:\n%s", out)
		}
	})
}

func agentUIDIf(s *socketSession) int {
	if s.agent {
		return agentUID
	}
	return 0
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
