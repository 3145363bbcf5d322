package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
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
// target in the root, and the link itself, wherever it leads; a missing
// one gets a placeholder, made and removed only while it is the same,
// empty file; nothing in read-only mode.
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
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: []string{".codex/**", ".claude/**", ".mcp.json", "**/.bashrc"}}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	pe := planProtectedEdges(p, roots)
	if want := []string{filepath.Join(ws, "decoy")}; !slices.Equal(pe.targets, want) {
		t.Errorf("read-only %q, want %q (the link's target in the root, not the one outside)", pe.targets, want)
	}
	if want := []string{filepath.Join(ws, ".claude"), filepath.Join(ws, ".codex")}; !slices.Equal(pe.links, want) {
		t.Errorf("links %q, want %q (both, the one that leads outside too)", pe.links, want)
	}
	var paths []string
	for _, h := range pe.holders {
		paths = append(paths, h.Path)
	}
	want := []string{filepath.Join(ws, ".mcp.json"), filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".git", "config.worktree"),
		filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "info"), filepath.Join(ws, ".git", "objects")}
	if !slices.Equal(paths, want) {
		t.Errorf("placeholders %q, want %q", paths, want)
	}
	m := MountPlan{Placeholders: pe.holders}
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
	if pe := planProtectedEdges(policy.Policy{Mode: policy.ReadOnly, Cwd: ws, Protected: p.Protected}, roots); pe.targets != nil || pe.holders != nil || pe.links != nil {
		t.Errorf("read-only mode: %+v", pe)
	}
}

// TestRefreshPlaceholdersOrder: a session that planned while another's
// placeholder folder (.git/info) was there plans a placeholder in it
// (.git/info/attributes); when the other session removes its folder
// before this one takes the lock, the refreshed plan makes the folder
// again, and what it planned in it is held by the folder's bind and
// dropped (dropBeneathPlaceholders). Before: MakePlaceholders failed with
// "no such file or directory" (64 concurrent sessions of
// TestExecShellKeepsNoCapability met it), and the session did not start.
func TestRefreshPlaceholdersOrder(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/.git/", "ws/.git/info/")
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	m := planMounts(p, roots)
	attributes := filepath.Join(ws, ".git", "info", "attributes")
	if !slices.ContainsFunc(m.Placeholders, func(h Placeholder) bool { return h.Path == attributes }) {
		t.Fatalf("no placeholder %s planned: %v", attributes, m.Placeholders)
	}
	// The other session ends: its placeholder folder goes.
	if err := os.Remove(filepath.Join(ws, ".git", "info")); err != nil {
		t.Fatal(err)
	}
	RefreshPlaceholders(&m)
	if err := MakePlaceholders(&m); err != nil {
		t.Fatalf("the refreshed plan's placeholders: %v", err)
	}
	// The first missing folder is the placeholder now, bound read-only:
	// it holds attributes, which needs no placeholder of its own.
	info := filepath.Join(ws, ".git", "info")
	if fi, err := os.Lstat(info); err != nil || !fi.IsDir() || !slices.Contains(m.ReadOnly, info) {
		t.Errorf("%s is not a placeholder folder bound read-only: %v, %v", info, err, m.ReadOnly)
	}
	RemovePlaceholders(m.Placeholders)
	if _, err := os.Lstat(filepath.Join(ws, ".git", "info")); err == nil {
		t.Errorf(".git/info, a placeholder, stayed after the removal")
	}
}

// TestRefreshPlaceholdersSymlinkGone: a protected head reached through a
// symlink when the plan was made (.codex -> decoy, its target bound) and
// gone before the refresh (removed by another session's shell, which
// the plan's binds do not stop): the refresh plans a placeholder for the
// name, as a plan made now would. The refresh's first version looked
// only at the link's target, still there, and left .codex to be made.
func TestRefreshPlaceholdersSymlinkGone(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/decoy/")
	ws := filepath.Join(tmp, "ws")
	must(t, os.Symlink("decoy", filepath.Join(ws, ".codex")))
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: []string{".codex/**"}}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	m := planMounts(p, roots)
	if len(m.Placeholders) != 0 || !slices.Contains(m.ReadOnly, filepath.Join(ws, "decoy")) {
		t.Fatalf("the plan: placeholders %v, read-only %q; want none, and decoy bound", m.Placeholders, m.ReadOnly)
	}
	must(t, os.Remove(filepath.Join(ws, ".codex")))
	RefreshPlaceholders(&m)
	codex := filepath.Join(ws, ".codex")
	if !slices.ContainsFunc(m.Placeholders, func(h Placeholder) bool { return h.Path == codex && h.Dir }) || !slices.Contains(m.ReadOnly, codex) {
		t.Errorf("after the link went: placeholders %v, read-only %q; want a folder placeholder at .codex, bound read-only", m.Placeholders, m.ReadOnly)
	}
}

// TestRefreshPlaceholdersDropsBindsBeneathThem: a protected file that
// another session's placeholder made exists when the plan binds it, and
// is gone with that session before this one takes the lock. The refresh
// then puts a placeholder at the first missing folder above it, which is
// bound read-only and empty; a bind of the file beneath would find
// nothing, and the session would fail to start (ENOENT in the child), so
// the refresh drops it: the folder's bind holds it.
func TestRefreshPlaceholdersDropsBindsBeneathThem(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/.git/", "ws/.git/objects/info/alternates")
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	m := planMounts(p, roots)
	alternates := filepath.Join(ws, ".git", "objects", "info", "alternates")
	if !slices.Contains(m.ReadOnly, alternates) {
		t.Fatalf("%s not bound read-only: %v", alternates, m.ReadOnly)
	}
	otherSessionEnded(t, &m, p, roots, filepath.Join(ws, ".git", "objects"))
	for _, ro := range m.ReadOnly {
		if _, err := os.Lstat(ro); err != nil {
			t.Errorf("the plan binds %s, which is not there: %v", ro, err)
		}
	}
	if !slices.Contains(m.ReadOnly, filepath.Join(ws, ".git", "objects")) {
		t.Errorf(".git/objects, the first missing folder, is not bound read-only: %v", m.ReadOnly)
	}
}

// TestRefreshedPlanMountsOnlyWhatIsThere: every path the refreshed plan
// mounts on is there, whatever list holds it: the pins above a protected
// path as much as its bind. The plan pinned .git/objects/info, the folder
// above alternates, another session's placeholders then; that session
// ended before this one took the lock, the refresh put a placeholder at
// .git/objects and dropped the bind of alternates, but kept the pin, and
// the child failed to start: "mount: pin .git/objects/info: no such file
// or directory" (TestExecShellKeepsNoCapability, two instances at once).
// The pins are planned from the binds, so they are refreshed with them.
func TestRefreshedPlanMountsOnlyWhatIsThere(t *testing.T) {
	tmp := canonTemp(t)
	// A deny_read file in those folders too (one the person put there
	// and removed while the session started): its cover goes with them.
	makeTree(t, tmp, "ws/.git/HEAD", "ws/.git/objects/info/alternates", "ws/.git/objects/info/secret.key")
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"**/*.key"}}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	m := planMounts(p, roots)
	info := filepath.Join(ws, ".git", "objects", "info")
	if !slices.Contains(m.Pinned, info) || !slices.Contains(m.HiddenFiles, filepath.Join(info, "secret.key")) {
		t.Fatalf("the plan neither pins %s nor hides the key in it: pinned %q, hidden %q", info, m.Pinned, m.HiddenFiles)
	}
	otherSessionEnded(t, &m, p, roots, filepath.Join(ws, ".git", "objects"))
	for name, list := range map[string][]string{"binds": m.ReadOnly, "pins": m.Pinned, "hidden folders": m.Hidden,
		"hidden files": m.HiddenFiles, "unpinned": m.Unpinned} {
		for _, path := range list {
			if _, err := os.Lstat(path); err != nil {
				t.Errorf("the plan's %s hold %s, which is not there: %v", name, path, err)
			}
		}
	}
	// What held the pin still holds: .git above the placeholder folder.
	if !slices.Contains(m.Pinned, filepath.Join(ws, ".git")) {
		t.Errorf(".git, above the placeholder folder, is no longer pinned: %q", m.Pinned)
	}
}

// TestMakePlaceholdersFailsNamingThePath: a folder the plan counted on
// went without a refresh (not under the runtime folder's lock), so a
// placeholder cannot be made: the error names the path it could not
// make, and the placeholders made before it are removed.
func TestMakePlaceholdersFailsNamingThePath(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/.git/", "ws/.git/info/")
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}
	m := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	attributes := filepath.Join(ws, ".git", "info", "attributes")
	if !slices.ContainsFunc(m.Placeholders, func(h Placeholder) bool { return h.Path == attributes }) {
		t.Fatalf("no placeholder %s planned: %v", attributes, m.Placeholders)
	}
	if err := os.Remove(filepath.Join(ws, ".git", "info")); err != nil {
		t.Fatal(err)
	}
	err := MakePlaceholders(&m)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(fmt.Sprint(err), attributes) {
		t.Fatalf("want ENOENT naming %s, got %v", attributes, err)
	}
	for _, h := range m.Placeholders {
		if h.Path == attributes {
			break
		}
		if _, err := os.Lstat(h.Path); err == nil {
			t.Errorf("%s, made before the failure, is left behind", h.Path)
		}
	}
}

// otherSessionEnded removes gone, another session's placeholder folder
// and what it held, as that session's end does before this one takes
// the runtime folder's lock; then it refreshes m and makes its
// placeholders, as the lock's holder does, and removes them when the
// test ends.
func otherSessionEnded(t *testing.T, m *MountPlan, p policy.Policy, roots []sandbox.Root, gone string) {
	t.Helper()
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	RefreshPlaceholders(m)
	if err := MakePlaceholders(m); err != nil {
		t.Fatalf("the refreshed plan's placeholders: %v", err)
	}
	t.Cleanup(func() { RemovePlaceholders(m.Placeholders) })
}
