package policy

import "testing"

func TestDeniedHint(t *testing.T) {
	for _, tc := range []struct {
		needed, maxMode Mode
		approval        Approval
		want            string
	}{
		{WorkspaceWrite, DangerFullAccess, ApprovalTTY, "retry this one call with --escalate workspace-write; a person at the terminal must approve it"},
		{DangerFullAccess, DangerFullAccess, ApprovalTTY, "retry this one call with --escalate danger-full-access; a person at the terminal must approve it"},
		{WorkspaceWrite, DangerFullAccess, ApprovalTrust, "if the user agrees, retry this one call with --escalate workspace-write"},
		{DangerFullAccess, DangerFullAccess, ApprovalNever, "this needs danger-full-access, and escalation is disabled here (approval: never): ask the user to change the policy"},
		{DangerFullAccess, WorkspaceWrite, ApprovalTrust, "this needs danger-full-access, above this deployment's max_mode workspace-write: ask the user to change the policy"},
		{DangerFullAccess, ReadOnly, ApprovalNever, "this needs danger-full-access, above this deployment's max_mode read-only: ask the user to change the policy"},
		{WorkspaceWrite, WorkspaceWrite, ApprovalTrust, "if the user agrees, retry this one call with --escalate workspace-write"},
		{"", DangerFullAccess, ApprovalTrust, ""},
	} {
		e := &DeniedError{Needed: tc.needed, MaxMode: tc.maxMode, Approval: tc.approval}
		if got := e.Hint(); got != tc.want {
			t.Errorf("Hint(needed %q, max %s, approval %s) = %q\nwant %q", tc.needed, tc.maxMode, tc.approval, got, tc.want)
		}
	}
}

func TestMarker(t *testing.T) {
	if got, want := Marker(WorkspaceWrite), "[sandbox: file access denied under workspace-write mode]"; got != want {
		t.Errorf("Marker(workspace-write) = %q, want %q", got, want)
	}
	e := &DeniedError{Op: "write", Path: "/etc/hosts", Mode: WorkspaceWrite, Reason: ReasonOutsideRoots}
	if got, want := e.Marker(), "[sandbox: file access denied under workspace-write mode]"; got != want {
		t.Errorf("Marker() = %q, want %q", got, want)
	}
	if got, want := e.Error(), "write: /etc/hosts: outside writable roots"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Matched, e.Refusal = "**/.git/**", "escalation to danger-full-access refused: approval is never"
	if got, want := e.Error(), "write: /etc/hosts: outside writable roots (**/.git/**); escalation to danger-full-access refused: approval is never"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
