package exec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// approvedPath is one entry of an escalation request's "paths".
type approvedPath struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
}

// TestExecPatchApprovalNamesEveryPath: a patch escalated from inside a
// session, through the broker to the supervisor, is put to the
// session's approval_command with every path it changes: the updated
// file outside the roots, a second file it creates there and both ends
// of a *** Move to:. Before, the request named the first denied file
// alone (its "path" and "resolved"); the rest were only inside the diff.
func TestExecPatchApprovalNamesEveryPath(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	c := newExecConfigCase(t, 0, "")
	harness.WriteTree(t, c.out, map[string]string{"x.txt": "outside\n", "old.txt": "move me\n"})
	body := "*** Begin Patch\n" +
		"*** Update File: " + filepath.Join(c.out, "x.txt") + "\n@@\n-outside\n+changed outside\n" +
		"*** Add File: " + filepath.Join(c.out, "new.txt") + "\n+planted\n" +
		"*** Update File: " + filepath.Join(c.out, "old.txt") + "\n*** Move to: " + filepath.Join(c.out, "moved.txt") + "\n@@\n-move me\n+moved\n" +
		"*** End Patch\n"
	if err := os.WriteFile(filepath.Join(c.ws, "change.patch"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := c.run(t, `dsh-fs patch --from change.patch --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var req struct {
		Paths []approvedPath `json:"paths"`
	}
	recorded := harness.ReadFile(t, c.mark)
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	want := []approvedPath{
		{"update", filepath.Join(c.out, "x.txt"), filepath.Join(c.out, "x.txt")},
		{"create", filepath.Join(c.out, "new.txt"), filepath.Join(c.out, "new.txt")},
		{"move_from", filepath.Join(c.out, "old.txt"), filepath.Join(c.out, "old.txt")},
		{"move_to", filepath.Join(c.out, "moved.txt"), filepath.Join(c.out, "moved.txt")},
	}
	if len(req.Paths) != len(want) {
		t.Fatalf("the session's approver was asked to approve %+v, want %+v\nrequest: %s", req.Paths, want, recorded)
	}
	for i := range want {
		if req.Paths[i] != want[i] {
			t.Errorf("paths[%d] = %+v, want %+v", i, req.Paths[i], want[i])
		}
	}
	wantContent(t, filepath.Join(c.out, "moved.txt"), "moved\n")
}
