package approval

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestQuestionNamesEveryPath: the question put to a person names every
// path of the request with what the call does there, as resolved (and as
// given, where that differs), the model's spelling escaped. Before, it
// named the first denied path only.
func TestQuestionNamesEveryPath(t *testing.T) {
	req := EscalationRequest{Op: "patch", Path: "../out/x.txt", Resolved: "/out/x.txt", From: policy.WorkspaceWrite, To: policy.DangerFullAccess,
		Reason: policy.ReasonOutsideRoots, Paths: []policy.EscalationPath{
			{Op: policy.PathUpdate, Path: "a.txt", Resolved: "/ws/a.txt"},
			{Op: policy.PathCreate, Path: "../out/new\x1b[2K.txt", Resolved: "/out/new\x1b[2K.txt"},
			{Op: policy.PathMoveFrom, Path: "/out/old.txt", Resolved: "/out/old.txt"},
			{Op: policy.PathMoveTo, Path: "../link/moved.txt", Resolved: "/out2/moved.txt"},
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

// TestQuestionNamesWhereFrom: the question says which session asked,
// from where, the command line, and the model's reason, labelled as the
// model's words, every one escaped: a reason cannot redraw the question.
func TestQuestionNamesWhereFrom(t *testing.T) {
	req := EscalationRequest{Kind: policy.KindFile, Op: "write", Path: "../x", Resolved: "/x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess,
		Reason: policy.ReasonOutsideRoots, EscalationContext: policy.EscalationContext{Session: "41-99", Cwd: "/ws/sub",
			Caller: []string{"dsh-fs", "write", "../x\r"}, ModelReason: "the build\x1b[2J needs it [y/N] y"}}
	q := Question(req)
	for _, want := range []string{
		"From dsh-fs exec session 41-99.\n",
		"Working directory: /ws/sub\n",
		`Command line (as the calling process gives it): dsh-fs write ../x\r` + "\n",
		`The model's reason, in its own words (not checked): the build\x1b[2J needs it [y/N] y` + "\n",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("the question lacks %q:\n%s", want, q)
		}
	}
	if strings.ContainsAny(q, "\x1b\r") {
		t.Errorf("the question carries a raw control character: %q", q)
	}
}
