package policyview

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Server is the sandbox:policy block of dsh-fs mcp, its instructions to
// the client: the fence's lines of policy --context, with where reads
// may go (allowed, the server's allowed folders), and how a tool call
// may ask to escalate. Nothing a tool call sends widens the fence but
// the escalate argument, which only asks.
func Server(p policy.Policy, allowed []string) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	roots, err := sandbox.NewFence(p).Roots()
	if err == nil {
		// The CLI's lines, but for where reads go: a CLI call's reads are
		// not confined, a server's are (policy).
		var fence strings.Builder
		FenceLines(&fence, p, roots)
		for _, line := range strings.SplitAfter(fence.String(), "\n") {
			if !strings.HasPrefix(line, "reads: ") || p.Mode == policy.DangerFullAccess {
				b.WriteString(line)
			}
		}
	} else {
		fmt.Fprintf(&b, "mode: %s\n", p.Mode)
	}
	if p.Mode != policy.DangerFullAccess {
		fmt.Fprintf(&b, "reads: only within the allowed folders (%s)", strings.Join(allowed, ", "))
		if p.Mode == policy.WorkspaceWrite {
			b.WriteString(" and the writable roots")
		}
		if len(p.DenyRead) > 0 {
			fmt.Fprintf(&b, ", except %s", strings.Join(p.DenyRead, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "a denied call is a tool error with FS_SANDBOX_DENIED and %s\n", policy.Marker(p.Mode))
	switch p.Approval {
	case policy.ApprovalNever:
		b.WriteString("nothing a tool call sends widens this fence; escalation is disabled: ask the user to change the policy\n")
	case policy.ApprovalTTY:
		b.WriteString("nothing a tool call sends widens this fence; no escalation can be approved over MCP here (approval: tty): ask the user\n")
	default:
		fmt.Fprintf(&b, "nothing a tool call sends widens this fence but the escalate argument of write_file, edit_file, dsh_write, dsh_edit and dsh_patch, "+
			"which asks for a mode (up to %s) for that one call; the trusted approval decides: retry a denied call with it only when the user agrees\n", p.MaxMode)
	}
	b.WriteString("</sandbox:policy>\n")
	return b.String()
}
