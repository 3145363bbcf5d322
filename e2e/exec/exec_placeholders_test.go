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

// TestExecProtectedSymlinksStay: a symlink a protected path is reached
// through when the session starts can be neither removed nor renamed
// inside it, wherever it leads: into the workspace (.codex), outside the
// roots (.vscode), nowhere (.claude), through another link (.idea), or
// from inside the root's .git (.git/hooks). Otherwise the session puts a
// folder of its own in the link's place and writes what the protected
// path guards. A symlink on no protected path stays the session's to
// remove.
func TestExecProtectedSymlinksStay(t *testing.T) {
	forEachUser(t, func(t *testing.T, s *socketSession) {
		outside := filepath.Join(filepath.Dir(s.ws), "outside-vscode")
		for _, d := range []string{"decoy-codex", "idea-real", ".git", "hooks-elsewhere", outside} {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.ws, d)
			}
			os.Mkdir(d, 0o755)
			s.ownBy(d)
		}
		links := map[string]string{
			".codex":     "decoy-codex",
			".vscode":    outside,
			".claude":    "claude-gone",
			".idea":      "idea-link",
			"idea-link":  "idea-real",
			".git/hooks": "../hooks-elsewhere",
			"plain-link": "decoy-codex",
		}
		for name, target := range links {
			p := filepath.Join(s.ws, name)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			os.Lchown(p, agentUIDIf(s), agentUIDIf(s))
		}
		script := `rm .codex; mkdir .codex; echo x > .codex/config.toml
mv .codex codex-aside
rm .vscode; mkdir .vscode; echo '{}' > .vscode/settings.json
rm .claude; mkdir .claude; echo '{}' > .claude/settings.json
rm idea-link; mkdir idea-link; echo x > idea-link/workspace.xml
rm .git/hooks; mkdir .git/hooks; echo x > .git/hooks/pre-commit
rm plain-link; echo "plainlink=$?"
true
`
		out := s.run(t, []string{"--tmp=false"}, script)
		for name, target := range links {
			if name == "plain-link" {
				continue
			}
			if got, err := os.Readlink(filepath.Join(s.ws, name)); err != nil || got != target {
				t.Errorf("%s: the link is %q (%v) after the session, want %q:\n%s", name, got, err, target, out)
			}
		}
		for _, p := range []string{".codex/config.toml", "codex-aside", "decoy-codex/config.toml", ".vscode/settings.json",
			filepath.Join(outside, "settings.json"), ".claude/settings.json", "claude-gone", "idea-link/workspace.xml",
			"idea-real/workspace.xml", ".git/hooks/pre-commit", "hooks-elsewhere/pre-commit"} {
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.ws, p)
			}
			if fileExists(p) {
				t.Errorf("the session made %s:\n%s", p, out)
			}
		}
		if !strings.Contains(out, "plainlink=0") || fileExists(filepath.Join(s.ws, "plain-link")) {
			t.Errorf("a symlink on no protected path could not be removed:\n%s", out)
		}
	})
}
