package supervisor

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestOutsideReadOnlyLayer pins what policy says of the read-only tree:
// held only when the plan made it, and which parts hold otherwise.
func TestOutsideReadOnlyLayer(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *layout.MountPlan
		why  string
		held bool
		want []string
	}{
		{name: "no mount layer", why: "not root, and this kernel allows no unprivileged user namespace",
			want: []string{"not held for the shell: not root, and this kernel allows no unprivileged user namespace"}},
		{name: "no mount_setattr", plan: &layout.MountPlan{Files: plan.Files{Pinned: []string{"/w/sub"}}},
			want: []string{"not held for the shell: ", "; folders above protected paths pinned against rename: 1"}},
		{name: "read-only mode", plan: &layout.MountPlan{Files: plan.Files{OutsideReadOnly: true}}, held: true,
			want: []string{"everything is read-only, metadata included"}},
		{name: "workspace-write", plan: &layout.MountPlan{Files: plan.Files{OutsideReadOnly: true, Writable: []string{"/tmp", "/w"},
			Pinned: []string{"/w/sub"}}, Unpinned: []string{"/w/x/.git"}}, held: true,
			want: []string{"read-only outside /tmp, /w, metadata included", "nodev and nosuid",
				"pinned against rename: 1 (protected paths left unpinned past the budget: 1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, text := outsideReadOnlyLayer(tc.plan, tc.why)
			if held != tc.held {
				t.Errorf("held = %v, want %v (%s)", held, tc.held, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q lacks %q", text, w)
				}
			}
		})
	}
}

// TestDenialsFolderOneName: the child binds the denial log's folder by
// the plan's name for it (plan.DenialsFolder, the child knows no policy),
// the supervisor writes it by the policy's: one folder, one name.
func TestDenialsFolderOneName(t *testing.T) {
	if plan.DenialsFolder != policy.DenialsFolder {
		t.Errorf("plan.DenialsFolder %q, policy.DenialsFolder %q: the child would bind a folder the log is not in", plan.DenialsFolder, policy.DenialsFolder)
	}
}
