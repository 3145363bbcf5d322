package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestOpenDirDecidesItself (issue 22): Lock, the only way a caller
// outside the package gets a folder to replace a file in, opens what the
// fence's own verdict allows, never what a caller hands in. A Target a caller outside
// the package builds, or one CheckWrite denied, must be refused as
// CheckWrite refuses it, and nothing is made or opened. (When Target's
// root was exported, one outside the roots that claimed / as its root
// opened.) TestOpenDirForgedVerdict holds the open itself to it.
func TestOpenDirDecidesItself(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What a caller can build: the verdict's fields are unexported, so
	// the compiler refuses a Target that claims a writable root.
	target := func(p string) sandbox.Target { return sandbox.Target{Given: p, Path: p} }
	pol := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever}
	for _, tc := range []struct {
		name   string
		target sandbox.Target
		reason string
	}{
		{"outside", target(filepath.Join(outside, "x")), policy.ReasonOutsideRoots},
		{"outside, through ..", sandbox.Target{Given: filepath.Join(ws, "../outside/x"), Path: filepath.Join(outside, "x")}, policy.ReasonOutsideRoots},
		{"a protected path", target(filepath.Join(ws, ".git/config")), policy.ReasonProtected},
		{"a protected folder to be made", target(filepath.Join(ws, ".git/hooks/x")), policy.ReasonProtected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sandbox.NewFence(pol)
			check := tc.target
			var denied *policy.DeniedError
			if err := f.CheckWrite("write", &check); !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Fatalf("CheckWrite = %v, want a denial (%s): the case is wrong", err, tc.reason)
			}
			given := tc.target
			h, err := f.Lock("write", &given, sandbox.Intent{Mkdir: true})
			if h != nil {
				h.Close()
			}
			if !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Errorf("Lock of a hand-made target = %v, %v; want the denial CheckWrite gives (%s)", h, err, tc.reason)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".git/hooks")); err == nil {
				t.Errorf("Lock made .git/hooks")
			}
		})
	}
}
