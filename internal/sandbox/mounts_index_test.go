package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
	p := Policy{Mode: WorkspaceWrite, Cwd: ws, Protected: DefaultProtected, DenyRead: []string{"**/.env"}}
	got := PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
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
