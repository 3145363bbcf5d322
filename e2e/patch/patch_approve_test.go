package patch

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// approvedPath is one entry of an escalation request's "paths".
type approvedPath struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
}

// TestPatchApprovalNamesEveryPath: the escalation request an
// approval_command gets for a patch names every path the patch changes,
// with what it does there and where it resolves: the file inside the
// roots, the updated file outside them, a second file it creates outside
// them, and both ends of a *** Move to: whose target is reached through
// a symlink. Before, the request carried one path and resolved, the first
// denied file's; the created file and the move's target were only inside
// the diff, and an approver deciding by path approved them unseen.
func TestPatchApprovalNamesEveryPath(t *testing.T) {
	base := harness.CanonicalTemp(t)
	ws, out, out2 := filepath.Join(base, "ws"), filepath.Join(base, "out"), filepath.Join(base, "out2")
	harness.WriteTree(t, base, map[string]string{"ws/a.txt": "inside\n", "out/x.txt": "outside\n", "out/old.txt": "move me\n", "out2/.keep": ""})
	if err := os.Symlink(out2, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	body := "*** Begin Patch\n" +
		"*** Update File: a.txt\n@@\n-inside\n+changed inside\n" +
		"*** Update File: ../out/x.txt\n@@\n-outside\n+changed outside\n" +
		"*** Add File: ../out/new.txt\n+planted\n" +
		"*** Update File: ../out/old.txt\n*** Move to: ../link/moved.txt\n@@\n-move me\n+moved\n" +
		"*** End Patch\n"
	record := filepath.Join(base, "asked.json")
	approver, err := exec.LookPath("fake-approver")
	if err != nil {
		t.Fatal(err)
	}
	env := harness.Env(t, ws)
	harness.WriteSystemConfig(t, env, "approval: command\napproval_command: ["+strconv.Quote(approver)+", "+strconv.Quote(record)+", \"0\"]\n")
	c := harness.Cmd(harness.Bin(t), env, ws, "patch", "--from", "-", "--escalate", "danger-full-access")
	code, _, stdout, stderr := harness.Run(t, c, strings.NewReader(body))
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// The request is what docs/schema/approval-request.json says.
	harness.Validate(t, harness.Schemas(t)["approval-request.json"], "approval-request.json", harness.ReadFile(t, record))
	wantPaths(t, harness.ReadFile(t, record), []approvedPath{
		{"update", "a.txt", filepath.Join(ws, "a.txt")},
		{"update", "../out/x.txt", filepath.Join(out, "x.txt")},
		{"create", "../out/new.txt", filepath.Join(out, "new.txt")},
		{"move_from", "../out/old.txt", filepath.Join(out, "old.txt")},
		{"move_to", "../link/moved.txt", filepath.Join(out2, "moved.txt")},
	})
	if got := harness.ReadFile(t, filepath.Join(out2, "moved.txt")); got != "moved\n" {
		t.Errorf("moved.txt = %q", got)
	}
}

// wantPaths fails unless the request recorded names exactly want.
func wantPaths(t *testing.T, recorded string, want []approvedPath) {
	t.Helper()
	var req struct {
		Paths []approvedPath `json:"paths"`
	}
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	if len(req.Paths) != len(want) {
		t.Fatalf("the approver was asked to approve %+v\nwant every path %+v\nrequest: %s", req.Paths, want, recorded)
	}
	for i := range want {
		if req.Paths[i] != want[i] {
			t.Errorf("paths[%d] = %+v, want %+v", i, req.Paths[i], want[i])
		}
	}
}

// TestReasonNeedsEscalate: --reason says why an escalation is needed;
// without --escalate, or longer than 1000 bytes, it is
// FS_INVALID_ARGUMENT and nothing is written.
func TestReasonNeedsEscalate(t *testing.T) {
	ws := harness.CanonicalTemp(t)
	env := harness.Env(t, ws)
	for _, args := range [][]string{
		{"write", "a.txt", "--content", "x", "--reason", "because"},
		{"write", "a.txt", "--content", "x", "--escalate", "danger-full-access", "--reason", strings.Repeat("r", 1001)},
	} {
		code, res, stdout, _ := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, args...), nil)
		if code == 0 || res.Error.Code != "FS_INVALID_ARGUMENT" || !strings.Contains(res.Error.Message, "--reason") {
			t.Errorf("%q: exit %d, %s; want FS_INVALID_ARGUMENT naming --reason", args[len(args)-1][:min(20, len(args[len(args)-1]))], code, stdout)
		}
		if _, err := os.Lstat(filepath.Join(ws, "a.txt")); err == nil {
			t.Errorf("a.txt was written")
		}
	}
}
