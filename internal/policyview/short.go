package policyview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Shell is what the short block says of the model's shell.
type Shell struct {
	// Session says the call runs inside a dsh-fs exec session, whose
	// shell is held to the same fence.
	Session bool
	// CachesCopied says the session's toolchain caches are copy-on-write.
	CachesCopied bool
	// NoExec says why dsh-fs exec cannot run on this OS at all, and what
	// to do (Windows: WSL2); "" where it can.
	NoExec string
}

// Short is the sandbox:policy block a harness gives the model (policy
// --context): in words, what an agent needs before its first call (the
// workspace root, what else it may write, what stays read-only, what the
// shell meets, how to escalate and who approves) in about half a
// kilobyte. Everything it leaves out, the lists of globs and
// paths, is in the verbose block (policy --context --verbose). It
// depends on the policy alone, so an identical policy gives identical
// bytes and a prompt cache stays warm.
func Short(p policy.Policy, roots []sandbox.Root, sh Shell) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	writeWhere(&b, p, roots)
	if sh.Session {
		b.WriteString("shell: same fence (\"Read-only file system\", \"Permission denied\")")
		if sh.CachesCopied {
			b.WriteString("; caches copy-on-write")
		}
	} else if sh.NoExec != "" {
		b.WriteString("shell: not fenced (" + sh.NoExec + ")")
	} else {
		b.WriteString("shell: not fenced (no dsh-fs exec session)")
	}
	if sh.NoExec != "" {
		b.WriteString("; network not held for the shell\n")
	} else {
		fmt.Fprintf(&b, "; network %s\n", networkWords(p))
	}
	b.WriteString("denied: FS_SANDBOX_DENIED; dsh-fs stat PATH says why and what lifts it\n")
	fmt.Fprintf(&b, "escalate: %s\n", escalationWords(p, sh.Session))
	b.WriteString("more: dsh-fs policy --context --verbose\n</sandbox:policy>\n")
	return b.String()
}

// writeWhere says where the model may write and read.
func writeWhere(b *strings.Builder, p policy.Policy, roots []sandbox.Root) {
	var workspace string
	var others []string
	for _, r := range roots {
		if r.Origin == "cwd" && workspace == "" {
			workspace = r.Path
		} else {
			others = append(others, r.Path)
		}
	}
	if workspace != "" {
		fmt.Fprintf(b, "workspace root: %s (mode %s)\n", workspace, p.Mode)
	} else if p.Cwd != "" && p.Mode == policy.WorkspaceWrite {
		fmt.Fprintf(b, "workspace: %s, not writable (mode %s)\n", p.Cwd, p.Mode)
	} else if p.Cwd != "" {
		fmt.Fprintf(b, "workspace: %s (mode %s)\n", p.Cwd, p.Mode)
	} else {
		fmt.Fprintf(b, "mode: %s\n", p.Mode)
	}
	switch p.Mode {
	case policy.ReadOnly:
		b.WriteString("writable: nothing; every write is denied\n")
	case policy.DangerFullAccess:
		b.WriteString("writable: anywhere the operating system allows\n")
	default:
		b.WriteString("writable: ")
		switch {
		case workspace != "" && len(others) > 0:
			fmt.Fprintf(b, "the workspace root, %s", strings.Join(others, ", "))
		case workspace != "":
			b.WriteString("the workspace root")
		case len(others) > 0:
			b.WriteString(strings.Join(others, ", "))
		default:
			b.WriteString("nothing")
		}
		fmt.Fprintf(b, "; the rest is read-only, as are %s and .git's config and hooks\n", protectedWords(p.Protected))
	}
	if len(p.DenyRead) > 0 {
		fmt.Fprintf(b, "reads: everywhere but %s\n", strings.Join(p.DenyRead, ", "))
	} else {
		b.WriteString("reads: everywhere\n")
	}
}

// protectedWords names the protected globs: the default list in words,
// any other list as its globs.
func protectedWords(protected []string) string {
	if len(protected) == 0 {
		return "nothing more"
	}
	if slices.Equal(protected, policy.DefaultProtected) {
		return "editor, agent and shell settings (.vscode/, .claude/, .bashrc …)"
	}
	return strings.Join(protected, ", ")
}

// networkWords is what the shell reaches over the network.
func networkWords(p policy.Policy) string {
	switch p.Network {
	case policy.NetworkOn:
		return "on"
	case policy.NetworkAllowlist:
		if len(p.NetworkAllow) == 0 {
			return "only through the session's proxy, to no host"
		}
		return "only through the session's proxy, to " + strings.Join(p.NetworkAllow, ", ")
	}
	return "off"
}

// escalationWords says how to escalate and who approves.
func escalationWords(p policy.Policy, session bool) string {
	if p.Mode == policy.DangerFullAccess {
		return "not needed in this mode"
	}
	if p.Approval == policy.ApprovalNever || !p.MaxMode.Wider(p.Mode) {
		return "none here; ask the user to change the policy"
	}
	retry := fmt.Sprintf("retry a denied dsh-fs call with --escalate MODE --reason WHY (up to %s); ", p.MaxMode)
	switch p.Approval {
	case policy.ApprovalCommand:
		return retry + "the harness's approver decides"
	case policy.ApprovalTTY:
		return retry + "a person at the terminal approves"
	case policy.ApprovalTrust:
		return retry + "only when the user agrees"
	}
	if session {
		return retry + "the person at dsh-fs exec's terminal approves"
	}
	return "only inside a dsh-fs exec session, whose person approves; ask the user"
}
