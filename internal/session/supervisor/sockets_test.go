package supervisor

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestShellSocketsSaysWhatIsLeft: below Landlock ABI 9, policy says
// sockets_held only when the kernel's list was read and every socket in
// it could be found; what is left uncovered is named.
func TestShellSocketsSaysWhatIsLeft(t *testing.T) {
	p := policy.Policy{Mode: policy.WorkspaceWrite, Enforce: policy.EnforceAuto}
	if layout.SocketLandlock(p) {
		t.Skip("Landlock fences sockets here (ABI 9): the mount layer hides none")
	}
	for _, tc := range []struct {
		name string
		m    layout.MountPlan
		held bool
		want string
	}{
		{"all covered", layout.MountPlan{Files: plan.Files{HiddenSockets: []string{"/run/a.sock"}}}, true, "1 unix sockets bound outside"},
		{"gone", layout.MountPlan{SocketsLeft: []string{"/run/x.sock (no socket at its path)"}}, true, "not covered: /run/x.sock (no socket at its path)"},
		{"relative", layout.MountPlan{SocketsLeft: []string{"x.sock (bound at a relative path)"}}, false, "not held for the shell: "},
		{"unread", layout.MountPlan{SocketsUnread: "no /proc"}, false, "could not be read (no /proc)"},
	} {
		held, text := shellSockets(p, &tc.m, "")
		if held != tc.held || !strings.Contains(text, tc.want) {
			t.Errorf("%s: %t %q, want %t and %q", tc.name, held, text, tc.held, tc.want)
		}
	}
}
