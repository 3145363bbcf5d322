package shell

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestOutsideReadOnlyLayer pins what policy says of the read-only tree:
// held only when the plan made it, and which parts hold otherwise.
func TestOutsideReadOnlyLayer(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *sandbox.MountPlan
		why  string
		held bool
		want []string
	}{
		{name: "no mount layer", why: "not root, and this kernel allows no unprivileged user namespace",
			want: []string{"not held for the shell: not root, and this kernel allows no unprivileged user namespace"}},
		{name: "no mount_setattr", plan: &sandbox.MountPlan{Pinned: []string{"/w/sub"}},
			want: []string{"not held for the shell: ", "; folders above protected paths pinned against rename: 1"}},
		{name: "read-only mode", plan: &sandbox.MountPlan{OutsideReadOnly: true}, held: true,
			want: []string{"everything is read-only, metadata included"}},
		{name: "workspace-write", plan: &sandbox.MountPlan{OutsideReadOnly: true, Writable: []string{"/tmp", "/w"},
			Pinned: []string{"/w/sub"}, Unpinned: []string{"/w/x/.git"}}, held: true,
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
