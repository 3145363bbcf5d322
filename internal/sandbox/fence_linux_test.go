package sandbox

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestIdentityFallback reaches the workspace through a bind mount: the
// canonical path is not lexically inside, but its ancestor is the same
// folder (docs/design.md §4 step 4).
func TestIdentityFallback(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "alias/", "ws_evil/f")
	ws, alias := filepath.Join(root, "ws"), filepath.Join(root, "alias")
	if err := unix.Mount(ws, alias, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount %s on %s: %v (needs root and CAP_SYS_ADMIN)", ws, alias, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(alias, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", alias, err)
		}
	})
	for _, tc := range []struct {
		path   string
		reason string
		rel    string
	}{
		{path: "$ROOT/alias/f", rel: "f"},
		{path: "$ROOT/alias/new/x", rel: "new/x"},
		{path: "$ROOT/alias", rel: "."},
		{path: "$ROOT/alias/.git/config", reason: policy.ReasonProtected},
		{path: "$ROOT/alias/.vscode", reason: policy.ReasonProtected},
		{path: "$ROOT/ws_evil/f", reason: policy.ReasonOutsideRoots},
		{path: "$ROOT/alias/../out/x", reason: policy.ReasonOutsideRoots},
		{path: "$ROOT/out/x", reason: policy.ReasonOutsideRoots},
	} {
		t.Run(tc.path, func(t *testing.T) {
			fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
			target, err := fence.Resolve(expandRoot(tc.path, root))
			if err != nil {
				t.Fatal(err)
			}
			err = fence.CheckWrite("write", &target)
			if tc.reason != "" {
				if de := deniedAs(t, err); de.Reason != tc.reason {
					t.Errorf("reason %q, want %q", de.Reason, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckWrite(%s) [canonical %s]: %v", tc.path, target.Path, err)
			}
			if target.root != ws || target.rel != tc.rel {
				t.Errorf("Root, Rel = %q, %q; want %q, %q", target.root, target.rel, ws, tc.rel)
			}
		})
	}
}
