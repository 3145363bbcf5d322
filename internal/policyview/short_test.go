package policyview

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestShortSaysWhoApproves: the short block names, for each approval, how
// to escalate and who decides, and stays within its bound with long roots.
func TestShortSaysWhoApproves(t *testing.T) {
	ws := "/home/someone/src/github.com/example/a-rather-long-project-name"
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}, {Path: "/tmp", Origin: "tmp"}}
	base := sandbox.Policy{Mode: sandbox.WorkspaceWrite, MaxMode: sandbox.DangerFullAccess, Cwd: ws,
		Protected: sandbox.DefaultProtected, Network: sandbox.NetworkOff}
	for _, tc := range []struct {
		name     string
		approval sandbox.Approval
		mode     sandbox.Mode
		session  bool
		want     []string
	}{
		{"supervisor in a session", sandbox.ApprovalSupervisor, "", true, []string{"--escalate MODE --reason WHY (up to danger-full-access)", "the person at dsh-fs exec's terminal approves", "shell: same fence"}},
		{"supervisor outside", sandbox.ApprovalSupervisor, "", false, []string{"escalate: only inside a dsh-fs exec session, whose person approves", "shell: not fenced"}},
		{"command", sandbox.ApprovalCommand, "", true, []string{"the harness's approver decides"}},
		{"tty", sandbox.ApprovalTTY, "", false, []string{"a person at the terminal approves"}},
		{"trust", sandbox.ApprovalTrust, "", false, []string{"only when the user agrees"}},
		{"never", sandbox.ApprovalNever, "", true, []string{"escalate: none here; ask the user to change the policy"}},
		{"read-only", sandbox.ApprovalSupervisor, sandbox.ReadOnly, true, []string{"(mode read-only)", "writable: nothing"}},
		{"danger", sandbox.ApprovalSupervisor, sandbox.DangerFullAccess, true, []string{"writable: anywhere", "escalate: not needed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.Approval = tc.approval
			if tc.mode != "" {
				p.Mode = tc.mode
			}
			got := Short(p, roots, Shell{Session: tc.session, CachesCopied: true})
			if len(got) > 700 {
				t.Errorf("%d bytes, want at most 700:\n%s", len(got), got)
			}
			for _, w := range append(tc.want, "<sandbox:policy>\n", "workspace root: "+ws, "</sandbox:policy>\n") {
				if !strings.Contains(got, w) {
					t.Errorf("no %q in:\n%s", w, got)
				}
			}
			if got != Short(p, roots, Shell{Session: tc.session, CachesCopied: true}) {
				t.Error("not the same bytes for the same policy")
			}
		})
	}
}
