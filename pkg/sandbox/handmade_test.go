package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestOpenDirDecidesItself (issue 22): OpenDir opens what the fence's own
// verdict allows, never what a Target's fields claim. A caller outside the
// package can build any Target: one that names a writable root it is not
// beneath, or one CheckWrite denied, must be refused as CheckWrite refuses
// it, and nothing is made or opened outside.
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
	policy := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Cwd: ws, Protected: sandbox.DefaultProtected,
		MaxMode: sandbox.DangerFullAccess, Approval: sandbox.ApprovalNever}
	for _, tc := range []struct {
		name   string
		target sandbox.Target
		reason string
	}{
		{"outside, claiming / as its root",
			sandbox.Target{Given: filepath.Join(outside, "x"), Path: filepath.Join(outside, "x"), Root: "/", Rel: filepath.Join(outside, "x")[1:]},
			sandbox.ReasonOutsideRoots},
		{"outside, claiming the workspace as its root",
			sandbox.Target{Given: filepath.Join(outside, "x"), Path: filepath.Join(outside, "x"), Root: ws, Rel: "../outside/x"},
			sandbox.ReasonOutsideRoots},
		{"a protected path, its verdict's fields filled in",
			sandbox.Target{Given: filepath.Join(ws, ".git/config"), Path: filepath.Join(ws, ".git/config"), Root: ws, Rel: ".git/config"},
			sandbox.ReasonProtected},
		{"a protected folder to be made",
			sandbox.Target{Given: filepath.Join(ws, ".git/hooks/x"), Path: filepath.Join(ws, ".git/hooks/x"), Root: ws, Rel: ".git/hooks/x"},
			sandbox.ReasonProtected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sandbox.NewFence(policy)
			check := tc.target
			var denied *sandbox.DeniedError
			if err := f.CheckWrite("write", &check); !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Fatalf("CheckWrite = %v, want a denial (%s): the case is wrong", err, tc.reason)
			}
			d, name, err := f.OpenDir("write", tc.target, true)
			if d != nil {
				d.Close()
			}
			if !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Errorf("OpenDir of a hand-made target = %q, %v; want the denial CheckWrite gives (%s)", name, err, tc.reason)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".git/hooks")); err == nil {
				t.Errorf("OpenDir made .git/hooks")
			}
		})
	}
}
