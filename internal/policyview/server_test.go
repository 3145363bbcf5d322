package policyview

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestServerSaysWhereReadsGo: dsh-fs mcp's block confines reads to the
// allowed folders (and, in workspace-write, the writable roots) where the
// CLI's says everywhere, and names how a tool call asks to escalate.
func TestServerSaysWhereReadsGo(t *testing.T) {
	ws := t.TempDir()
	base := policy.Policy{Cwd: ws, MaxMode: policy.DangerFullAccess, Protected: policy.DefaultProtected,
		Approval: policy.ApprovalCommand, DenyRead: []string{"**/*.key"}}
	for _, tc := range []struct {
		mode    policy.Mode
		want    []string
		notWant []string
	}{
		{policy.WorkspaceWrite, []string{"reads: only within the allowed folders (" + ws + ", /docs) and the writable roots, except **/*.key\n",
			"but the escalate argument of write_file"}, []string{"reads: everywhere"}},
		{policy.ReadOnly, []string{"reads: only within the allowed folders (" + ws + ", /docs), except **/*.key\n"}, []string{"and the writable roots", "reads: everywhere"}},
		{policy.DangerFullAccess, []string{"reads: everywhere except **/*.key\n"}, []string{"only within the allowed folders"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			p := base
			p.Mode = tc.mode
			block := Server(p, []string{ws, "/docs"})
			for _, w := range tc.want {
				if !strings.Contains(block, w) {
					t.Errorf("block lacks %q:\n%s", w, block)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(block, w) {
					t.Errorf("block says %q:\n%s", w, block)
				}
			}
		})
	}
}
