package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenDirForgedVerdict: the confined open decides again on the path
// as it resolves now, whatever verdict the Target carries. A Target
// whose unexported verdict claims "/" (or the workspace) as its writable
// root, as only code inside the package could forge it, is refused for a
// path outside the roots or in a protected path, and nothing is made.
func TestOpenDirForgedVerdict(t *testing.T) {
	base := tempRoot(t)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFence(Policy{Mode: WorkspaceWrite, Cwd: ws, Protected: DefaultProtected, MaxMode: DangerFullAccess, Approval: ApprovalNever})
	for _, tc := range []struct {
		name   string
		target Target
		reason string
	}{
		{"outside, claiming / as its root", Target{Given: outside + "/new/x", Path: outside + "/new/x", root: "/", rel: outside[1:] + "/new/x"}, ReasonOutsideRoots},
		{"protected, claiming the workspace", Target{Given: ws + "/.git/hooks/x", Path: ws + "/.git/hooks/x", root: ws, rel: ".git/hooks/x"}, ReasonProtected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := f.openDir("write", tc.target, true)
			if d != nil {
				d.Close()
			}
			var denied *DeniedError
			if !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Errorf("openDir = %v; want a denial (%s)", err, tc.reason)
			}
			for _, p := range []string{outside + "/new", ws + "/.git/hooks"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("openDir made %s", p)
				}
			}
		})
	}
}
