package policyview

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestShortSaysWhoApproves: the short block names, for each approval, how
// to escalate and who decides, and stays within its bound with long roots.
func TestShortSaysWhoApproves(t *testing.T) {
	ws := "/home/someone/src/github.com/example/a-rather-long-project-name"
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}, {Path: "/tmp", Origin: "tmp"}}
	base := policy.Policy{Mode: policy.WorkspaceWrite, MaxMode: policy.DangerFullAccess, Cwd: ws,
		Protected: policy.DefaultProtected, Network: policy.NetworkOff}
	for _, tc := range []struct {
		name     string
		approval policy.Approval
		mode     policy.Mode
		session  bool
		want     []string
	}{
		{"supervisor in a session", policy.ApprovalSupervisor, "", true, []string{"--escalate MODE --reason WHY (up to danger-full-access)", "the person at dsh-fs exec's terminal approves", "shell: same fence"}},
		{"supervisor outside", policy.ApprovalSupervisor, "", false, []string{"escalate: only inside a dsh-fs exec session, whose person approves", "shell: not fenced"}},
		{"command", policy.ApprovalCommand, "", true, []string{"the harness's approver decides"}},
		{"tty", policy.ApprovalTTY, "", false, []string{"a person at the terminal approves"}},
		{"trust", policy.ApprovalTrust, "", false, []string{"only when the user agrees"}},
		{"never", policy.ApprovalNever, "", true, []string{"escalate: none here; ask the user to change the policy"}},
		{"read-only", policy.ApprovalSupervisor, policy.ReadOnly, true, []string{"(mode read-only)", "writable: nothing"}},
		{"danger", policy.ApprovalSupervisor, policy.DangerFullAccess, true, []string{"writable: anywhere", "escalate: not needed"}},
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
