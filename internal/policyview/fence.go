// Package policyview says the policy in words for a model's context: the
// lines of the sandbox:policy block that every front end shows (dsh-fs
// policy --context, the instructions of dsh-fs mcp).
package policyview

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// FenceLines are the lines of the sandbox:policy block that say what the
// fence lets through, shared by policy --context and the instructions of
// dsh-fs mcp.
func FenceLines(b *strings.Builder, p policy.Policy, roots []sandbox.Root) {
	fmt.Fprintf(b, "mode: %s\n", p.Mode)
	switch p.Mode {
	case policy.ReadOnly:
		b.WriteString("writes: none; every write, edit and mkdir is denied\n")
	case policy.WorkspaceWrite:
		if len(roots) == 0 {
			b.WriteString("writable roots: none\n")
		} else {
			fmt.Fprintf(b, "writable roots: %s\n", strings.Join(sandbox.RootPaths(roots), ", "))
		}
		fmt.Fprintf(b, "protected, never written: %s\n", strings.Join(p.Protected, ", "))
		fmt.Fprintf(b, "in every .git (and its worktrees/*, modules/*), never written: %s; the rest of .git is writable, so git add and commit work\n",
			strings.Join(pathmatch.GitProtectedNames(), ", "))
	case policy.DangerFullAccess:
		b.WriteString("writes: anywhere the operating system allows\n")
	}
	if len(p.DenyRead) > 0 {
		fmt.Fprintf(b, "reads: everywhere except %s\n", strings.Join(p.DenyRead, ", "))
	} else {
		b.WriteString("reads: everywhere\n")
	}
}
