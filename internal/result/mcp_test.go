package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// outsideWorkspace is a denial outside the workspace root, as the fence
// gives it.
func outsideWorkspace() error {
	return &policy.DeniedError{Op: "write", Path: "../x", Resolved: "/x", Workspace: "/ws", Base: "/ws", Mode: policy.WorkspaceWrite,
		Reason: policy.ReasonOutsideRoots, WritableRoots: []string{"/ws"}, Needed: policy.DangerFullAccess,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalSupervisor}
}

// TestToolTextSameHereAndForwarded: a failure made here and the same
// failure given back as JSON by a call run elsewhere (DecodeFailure) read
// the same to the model; a refused escalation names its hint, a denial
// that was not refused names none (its hint names the CLI's --escalate).
func TestToolTextSameHereAndForwarded(t *testing.T) {
	denied := func(refused bool) error {
		e := &policy.DeniedError{Op: "write", Path: "/etc/x", Mode: policy.WorkspaceWrite, Reason: policy.ReasonOutsideRoots,
			WritableRoots: []string{"/ws"}, Needed: policy.DangerFullAccess, MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalSupervisor}
		if refused {
			e.Cause, e.Reason = e.Reason, policy.ReasonNotApproved
			e.Refusal = "escalation to danger-full-access refused: not approved"
		}
		return e
	}
	for _, tc := range []struct {
		name     string
		err      error
		want     []string
		wantNone []string
	}{
		{"denied", denied(false), []string{"code: FS_SANDBOX_DENIED", policy.Marker(policy.WorkspaceWrite), "writable roots: /ws", "do not try to get around it"}, []string{"hint:"}},
		{"outside the workspace", outsideWorkspace(), []string{"Error: write: ../x: /x is outside the workspace root /ws\n", "workspace root: /ws"}, []string{"hint:"}},
		{"refused", denied(true), []string{"hint: the escalation was refused", "reason: " + policy.ReasonNotApproved}, nil},
		{"hint with a flag", hinted(fserr.Stale, "read again and pass --if-match"), []string{"code: FS_STALE"}, []string{"hint:"}},
		{"hint of a CLI command", hinted(fserr.InvalidArgument, "write replaces a binary file whole"), []string{"hint: write_file replaces a binary file whole"}, nil},
		{"plain hint", hinted(fserr.NotFound, "dsh_ls lists the folder"), []string{"hint: dsh_ls lists the folder"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			here := NewFailure(Header{Op: "write", Path: "/etc/x"}, tc.err)
			raw, err := json.Marshal(here)
			if err != nil {
				t.Fatal(err)
			}
			forwarded, err := DecodeFailure(raw)
			if err != nil {
				t.Fatal(err)
			}
			text := ToolText(here)
			if got := ToolText(forwarded); got != text {
				t.Errorf("forwarded:\n%s\nhere:\n%s", got, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in:\n%s", w, text)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(text, w) {
					t.Errorf("%q in:\n%s", w, text)
				}
			}
		})
	}
}

func hinted(code fserr.Code, hint string) error {
	e := fserr.New(code, "failed")
	e.Hint = hint
	return e
}

// TestDecodeFailureRefusesGarbage: a line that is no failure object is
// an error, not an empty failure taken for one.
func TestDecodeFailureRefusesGarbage(t *testing.T) {
	if _, err := DecodeFailure([]byte("not json")); err == nil {
		t.Error("no error for a line that is not JSON")
	}
}
