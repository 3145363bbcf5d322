package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLiteralHead(t *testing.T) {
	for _, tc := range []struct {
		glob, head string
		dir        bool
	}{
		{".codex/**", ".codex", true},
		{".mcp.json", ".mcp.json", false},
		{"**/.bashrc", "", false},
		{"a/b*/c", "a", true},
		{"hooks/", "hooks", true},
		{"../x", "", false},
	} {
		if head, dir := literalHead(tc.glob); head != tc.head || dir != tc.dir {
			t.Errorf("literalHead(%q) = %q, %v; want %q, %v", tc.glob, head, dir, tc.head, tc.dir)
		}
	}
}

// TestProtectedEdges: a protected name that is a symlink protects its
// target in the root; a missing one gets a placeholder, made and
// removed only while it is the same, empty file; nothing in read-only
// mode.
func TestProtectedEdges(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/decoy/", "ws/.git/", "outside/")
	ws := filepath.Join(tmp, "ws")
	if err := os.Symlink("decoy", filepath.Join(ws, ".codex")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(ws, ".claude")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: WorkspaceWrite, Cwd: ws, Protected: []string{".codex/**", ".claude/**", ".mcp.json", "**/.bashrc"}}
	roots := []Root{{Path: ws, Origin: "cwd"}}
	ro, holders := planProtectedEdges(p, roots)
	if want := []string{filepath.Join(ws, "decoy")}; !slices.Equal(ro, want) {
		t.Errorf("read-only %q, want %q (the link's target in the root, not the one outside)", ro, want)
	}
	var paths []string
	for _, h := range holders {
		paths = append(paths, h.Path)
	}
	want := []string{filepath.Join(ws, ".mcp.json"), filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".git", "config.worktree"),
		filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "info"), filepath.Join(ws, ".git", "objects")}
	if !slices.Equal(paths, want) {
		t.Errorf("placeholders %q, want %q", paths, want)
	}
	m := MountPlan{Placeholders: holders}
	if err := MakePlaceholders(&m); err != nil {
		t.Fatal(err)
	}
	// One placeholder written, one replaced by a symlink: both stay.
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte("{}"), 0o644)
	os.Remove(filepath.Join(ws, ".git", "hooks"))
	os.Symlink("/nonexistent", filepath.Join(ws, ".git", "hooks"))
	RemovePlaceholders(m.Placeholders)
	for _, p := range []string{".mcp.json", ".git/hooks"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err != nil {
			t.Errorf("%s, changed in the session, was removed", p)
		}
	}
	for _, p := range []string{".git/config", ".git/info", ".git/objects"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s is left", p)
		}
	}
	if ro, holders := planProtectedEdges(Policy{Mode: ReadOnly, Cwd: ws, Protected: p.Protected}, roots); ro != nil || holders != nil {
		t.Errorf("read-only mode: %q, %v", ro, holders)
	}
}

// TestRefreshPlaceholdersOrder: a session that planned while another's
// placeholder folder (.git/info) was there plans a placeholder in it
// (.git/info/attributes); when the other session removes its folder
// before this one takes the lock, the refreshed plan makes the folder
// again before what lies in it. Before: MakePlaceholders failed with
// "no such file or directory" (64 concurrent sessions of
// TestExecShellKeepsNoCapability met it), and the session did not start.
func TestRefreshPlaceholdersOrder(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/.git/", "ws/.git/info/")
	ws := filepath.Join(tmp, "ws")
	p := Policy{Mode: WorkspaceWrite, Cwd: ws, Protected: DefaultProtected}
	roots := []Root{{Path: ws, Origin: "cwd"}}
	m := PlanMounts(p, roots)
	attributes := filepath.Join(ws, ".git", "info", "attributes")
	if !slices.ContainsFunc(m.Placeholders, func(h Placeholder) bool { return h.Path == attributes }) {
		t.Fatalf("no placeholder %s planned: %v", attributes, m.Placeholders)
	}
	// The other session ends: its placeholder folder goes.
	if err := os.Remove(filepath.Join(ws, ".git", "info")); err != nil {
		t.Fatal(err)
	}
	RefreshPlaceholders(&m, p, roots)
	if err := MakePlaceholders(&m); err != nil {
		t.Fatalf("the refreshed plan's placeholders: %v", err)
	}
	if _, err := os.Lstat(attributes); err != nil {
		t.Errorf("%s was not made: %v", attributes, err)
	}
	RemovePlaceholders(m.Placeholders)
	if _, err := os.Lstat(filepath.Join(ws, ".git", "info")); err == nil {
		t.Errorf(".git/info, a placeholder, stayed after the removal")
	}
}
