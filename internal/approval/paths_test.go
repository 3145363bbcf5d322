package approval

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestQuestionNamesEveryPath: the question put to a person names every
// path of the request with what the call does there, as resolved (and as
// given, where that differs), the model's spelling escaped. Before, it
// named the first denied path only.
func TestQuestionNamesEveryPath(t *testing.T) {
	req := EscalationRequest{Op: "patch", Path: "../out/x.txt", Resolved: "/out/x.txt", From: sandbox.WorkspaceWrite, To: sandbox.DangerFullAccess,
		Reason: sandbox.ReasonOutsideRoots, Paths: []sandbox.EscalationPath{
			{Op: sandbox.PathUpdate, Path: "a.txt", Resolved: "/ws/a.txt"},
			{Op: sandbox.PathCreate, Path: "../out/new\x1b[2K.txt", Resolved: "/out/new\x1b[2K.txt"},
			{Op: sandbox.PathMoveFrom, Path: "/out/old.txt", Resolved: "/out/old.txt"},
			{Op: sandbox.PathMoveTo, Path: "../link/moved.txt", Resolved: "/out2/moved.txt"},
		}}
	q := Question(req)
	for _, want := range []string{
		"It changes exactly these 4 paths, and nothing else:\n",
		"  update    /ws/a.txt (given as a.txt)\n",
		`  create    /out/new\x1b[2K.txt (given as ../out/new\x1b[2K.txt)` + "\n",
		"  move_from /out/old.txt\n",
		"  move_to   /out2/moved.txt (given as ../link/moved.txt)\n",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("the question lacks %q:\n%s", want, q)
		}
	}
	if strings.ContainsRune(q, '\x1b') {
		t.Errorf("the question carries a raw escape: %q", q)
	}
}
