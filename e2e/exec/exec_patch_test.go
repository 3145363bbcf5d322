//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecEscalatedPatch: a patch inside a session that asks --escalate
// goes to the supervisor as write and edit do (typed, over the broker),
// which asks the session's approver once with the whole patch and
// carries it out outside the kernel layer: a file outside the roots and
// one inside change together.
func TestExecEscalatedPatch(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	c := newExecConfigCase(t, 0, "")
	harness.WriteTree(t, c.ws, map[string]string{"in.txt": "inside\n"})
	if err := os.WriteFile(filepath.Join(c.out, "x.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(c.ws, "change.patch")
	body := "*** Begin Patch\n*** Update File: in.txt\n@@\n-inside\n+changed inside\n*** Update File: " + filepath.Join(c.out, "x.txt") + "\n@@\n-outside\n+changed outside\n*** End Patch\n"
	if err := os.WriteFile(patch, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := c.run(t, `dsh-fs patch --from change.patch --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if r := lastResult(t, stdout); !r.OK || !r.Escalated {
		t.Errorf("result %s: want ok and \"escalated\":true", stdout)
	}
	wantContent(t, filepath.Join(c.ws, "in.txt"), "changed inside\n")
	wantContent(t, filepath.Join(c.out, "x.txt"), "changed outside\n")
	if req := harness.ReadFile(t, c.mark); !strings.Contains(req, "+changed inside") || !strings.Contains(req, "+changed outside") {
		t.Errorf("the session's approver was asked %s, want the whole patch", req)
	}
}
