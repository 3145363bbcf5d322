//go:build unix

package layout

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestMountPlanLinks: a regular file in a root that is the same file as
// a deny_read file (a hard link made before the session) is hidden like
// it, for an anchored glob outside the root and a relative one inside;
// the plan hands over the identities it saw, each with its glob. A file
// with several links that is no secret's stays.
func TestMountPlanLinks(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "sec/key", "ws/.env", "ws/plain", "ws/deep/x/")
	ws := filepath.Join(tmp, "ws")
	for old, link := range map[string]string{"sec/key": "ws/deep/x/notes", "ws/.env": "ws/env.txt", "ws/plain": "ws/plain2"} {
		if err := os.Link(filepath.Join(tmp, old), filepath.Join(tmp, link)); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, DenyRead: []string{tmp + "/sec/**", ".env"}}
	got := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{Files: plan.Files{ReadOnly: []string{}, Hidden: []string{tmp + "/sec"},
		HiddenFiles: []string{ws + "/.env", ws + "/deep/x/notes", ws + "/env.txt"}}}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
	var globs []string
	for _, id := range got.DenyIdentities {
		var st unix.Stat_t
		unix.Stat(filepath.Join(ws, map[string]string{tmp + "/sec/**": "deep/x/notes", "**/.env": "env.txt"}[id.Glob]), &st)
		if uint64(st.Ino) != id.Ino || uint64(st.Dev) != id.Dev {
			t.Errorf("identity %+v is not the linked file's (%d, %d)", id, st.Dev, st.Ino)
		}
		globs = append(globs, id.Glob)
	}
	slices.Sort(globs)
	if want := []string{"**/.env", tmp + "/sec/**"}; !slices.Equal(globs, want) {
		t.Errorf("identities for %q, want %q", globs, want)
	}

	// A tree too large for the identity budget: its folder is partial,
	// and the links to what was not collected stay.
	o := testOptions()
	o.identityBudget = 0
	got = o.planIndexed(p, []sandbox.Root{{Path: ws, Origin: "cwd"}}, nil)
	want.HiddenFiles, want.Partial = []string{ws + "/.env", ws + "/env.txt"}, []string{tmp + "/sec"}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts past the identity budget:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
}
