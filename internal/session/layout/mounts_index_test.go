package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// fillFiles makes n empty files in dir, named to sort before "zz".
func fillFiles(t testing.TB, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%06d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A session can leave any number of files in a root: the next session's
// plan must still find what lies beyond them. Before the tree index the
// walk stopped at 20,000 entries, listed the root in Partial and bound
// neither zz/.git/config nor hid zz/.env.
func TestPlanMountsNoBudgetAPreviousSessionExhausts(t *testing.T) {
	tmp := canonTemp(t)
	ws := filepath.Join(tmp, "ws")
	fillFiles(t, ws, 20001)
	makeTree(t, ws, "zz/.git/HEAD", "zz/.git/objects/", "zz/.git/refs/", "zz/.git/config", "zz/.env")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"**/.env"}}
	got := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	if len(got.Partial) > 0 {
		t.Errorf("the plan stopped at a budget: partial %q", got.Partial)
	}
	if !slices.Contains(got.ReadOnly, ws+"/zz/.git/config") {
		t.Errorf("zz/.git/config is not bound read-only: %s", planJSON(got))
	}
	if !slices.Contains(got.HiddenFiles, ws+"/zz/.env") {
		t.Errorf("zz/.env is not hidden: %s", planJSON(got))
	}
}

// indexStore is a fresh tree-index store, as exec keeps one.
func indexStore(t testing.TB) *treeindex.Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := treeindex.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gitRepo is a git directory's layout under dir.
func gitRepo(dir string) []string {
	return []string{dir + "/HEAD", dir + "/objects/", dir + "/refs/", dir + "/config"}
}

// A warm index never hides what changed since it was kept: a nested .git
// made deep in a folder that existed, a folder holding a repository
// renamed into place, a .env made within the second of the last read.
func TestPlanMountsIndexSeesChanges(t *testing.T) {
	tmp := canonTemp(t)
	ws := filepath.Join(tmp, "ws")
	makeTree(t, ws, "a/b/c/code.go", "z/")
	makeTree(t, tmp, gitRepo("elsewhere/repo")...)
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"**/.env"}}
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	store := indexStore(t)
	time.Sleep(1100 * time.Millisecond) // no folder racy: the index is trusted
	planMountsIndexed(p, roots, store)
	if ix := store.Load(ws); ix == nil {
		t.Fatal("no index kept")
	}
	steps := []struct {
		name   string
		change func()
		check  func(m MountPlan) bool
	}{
		{"nested .git deep in an existing folder", func() { makeTree(t, ws, gitRepo("a/b/c/.git")...) },
			func(m MountPlan) bool { return slices.Contains(m.ReadOnly, ws+"/a/b/c/.git/config") }},
		{"a folder holding a repository renamed into place", func() {
			if err := os.Rename(filepath.Join(tmp, "elsewhere"), filepath.Join(ws, "a", "b", "moved")); err != nil {
				t.Fatal(err)
			}
		}, func(m MountPlan) bool { return slices.Contains(m.ReadOnly, ws+"/a/b/moved/repo/config") }},
		{"a .env in the second of the last read", func() { makeTree(t, ws, "z/.env") },
			func(m MountPlan) bool { return slices.Contains(m.HiddenFiles, ws+"/z/.env") }},
	}
	for _, st := range steps {
		st.change()
		if m := planMountsIndexed(p, roots, store); !st.check(m) {
			t.Errorf("%s: not covered by the next plan: %s", st.name, planJSON(m))
		}
	}
}

// A folder the supervisor cannot read is never taken as empty: it is
// hidden and named. The supervisor is a real ordinary user here, which
// root cannot stand in for: root reads every folder.
func TestPlanMountsUnreadableFolderHidden(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every folder; e2e/exec's TestExecUnreadableFolderHidden runs this as an ordinary user")
	}
	tmp := canonTemp(t)
	ws := filepath.Join(tmp, "ws")
	makeTree(t, ws, "locked/.git/HEAD", "locked/.git/objects/", "locked/.git/refs/", "locked/.git/config", "open/a")
	if err := os.Chmod(filepath.Join(ws, "locked"), 0o311); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(ws, "locked"), 0o755)
	m := planMounts(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	if !slices.Equal(m.Unreadable, []string{ws + "/locked"}) || !slices.Contains(m.Hidden, ws+"/locked") {
		t.Errorf("an unreadable folder is not hidden and named: %s", planJSON(m))
	}
}

func TestJoinName(t *testing.T) {
	for _, tc := range []struct{ dir, name string }{
		{"/", "."}, {"/", "a"}, {"/a/b", "."}, {"/a/b", "c"}, {".", "c"}, {"x/y", "z"}, {".", "."},
	} {
		if got, want := joinName(tc.dir, tc.name), filepath.Join(tc.dir, tc.name); got != want {
			t.Errorf("joinName(%q, %q) = %q, want %q", tc.dir, tc.name, got, want)
		}
	}
}

// A nested repository's worktrees/ is the session's to write: 4097
// folders there sorting before a real linked worktree must not leave
// that worktree's protected parts unbound in the next session. Before,
// pathmatch.ProtectedGitParts stopped at 4096 entries and listed the repository in
// Partial, and worktrees/zz/config.worktree stayed writable.
func TestPlanMountsGitPartsPastAnyCount(t *testing.T) {
	tmp := canonTemp(t)
	ws := filepath.Join(tmp, "ws")
	makeTree(t, ws, gitRepo("sub/.git")...)
	wt := ws + "/sub/.git/worktrees"
	for i := range 4097 {
		if err := os.MkdirAll(fmt.Sprintf("%s/a%05d", wt, i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	makeTree(t, wt, "zz/HEAD", "zz/commondir", "zz/config.worktree")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}
	got := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	if len(got.Partial) > 0 || !slices.Contains(got.ReadOnly, wt+"/zz/config.worktree") {
		t.Errorf("a linked worktree past 4096 entries is not protected: partial %q, zz/config.worktree read-only %v",
			got.Partial, slices.Contains(got.ReadOnly, wt+"/zz/config.worktree"))
	}
}

// A person's chmod -R (or chown -R) of the workspace between sessions
// moves every folder's ctime and no listing: the next plan finds them
// the same and settles them (treeindex.Index.Settle), so the plan after
// reads nothing again. Unsettled, every later plan read the whole tree:
// the bench's ordinary user paid 28-44 ms a start at 50,000 files.
func TestPlanSettlesATreeWideChmod(t *testing.T) {
	ws := filepath.Join(canonTemp(t), "ws")
	for i := range 12 {
		makeTree(t, ws, fmt.Sprintf("d%02d/f", i))
	}
	time.Sleep(1100 * time.Millisecond) // no folder racy
	store := indexStore(t)
	p, roots := notePolicy(ws, nil, nil)
	o := testOptions()
	first := o.plan(p, roots, store)
	first.SaveIndexes()
	must(t, filepath.WalkDir(ws, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(path, 0o755) // its own mode: only the ctime moves
		}
		return err
	}))
	time.Sleep(1100 * time.Millisecond)
	after := o.plan(p, roots, store)
	if ix := after.Indexes[0]; ix.Stats.Same < 12 || !ix.Changed() {
		t.Fatalf("the plan after the chmod: %+v, changed %t; want every folder found the same, and settled", ix.Stats, ix.Changed())
	}
	after.SaveIndexes()
	if ix := o.plan(p, roots, store).Indexes[0]; ix.Stats.Read != 0 {
		t.Errorf("the plan after a settled one read %d folders again, want none (%+v)", ix.Stats.Read, ix.Stats)
	}
}
