package report

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Block is the sandbox:policy block a harness puts in the model's
// context (policy --context), inside the dsh-fs exec session of rec or
// outside one (rec nil): the short block (policyview.Short), or with
// verbose the long one, with every glob, cache and rule. It depends on
// the policy alone, never on time or process, so an identical policy
// gives identical bytes and a prompt cache stays warm.
func Block(p policy.Policy, roots []sandbox.Root, rec *wire.Record, verbose bool) string {
	if verbose {
		return contextBlock(p, roots, rec)
	}
	return shortBlock(p, roots, rec)
}

// shortBlock is the sandbox:policy block a harness puts in the model's
// context (policyview.Short), inside a dsh-fs exec session (rec) or not.
func shortBlock(p policy.Policy, roots []sandbox.Root, rec *wire.Record) string {
	sh := policyview.Shell{Session: rec != nil, NoExec: noExecOn(runtime.GOOS)}
	if rec != nil {
		for _, c := range rec.Shell.Caches {
			sh.CachesCopied = sh.CachesCopied || c.Layer == plan.CacheOverlay
		}
	}
	return policyview.Short(p, roots, sh)
}

// contextBlock is the verbose sandbox:policy text (policy --context
// --verbose): every glob, cache and line the short block leaves out. It depends on the policy alone, never on time or
// process, so an identical policy gives identical bytes and a prompt cache
// stays warm. Inside a dsh-fs exec session (rec) it says that the shell
// is held to the same fence and how it sees the toolchain caches.
func contextBlock(p policy.Policy, roots []sandbox.Root, rec *wire.Record) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	policyview.FenceLines(&b, p, roots)
	if rec != nil {
		b.WriteString("shell: this dsh-fs exec session's shell is held to the same fence: a refused write fails with \"Read-only file system\" or \"Permission denied\", and deny_read paths look empty; dsh-fs stat PATH says which rule holds there and what lifts it\n")
		if len(rec.Shell.Caches) > 0 {
			_, text := supervisor.CachesText(rec.Shell.Caches)
			fmt.Fprintf(&b, "toolchain caches in the shell: %s\n", text)
		}
	} else if why := noExecOn(runtime.GOOS); why != "" {
		b.WriteString("shell: not fenced (" + why + "); dsh-fs stat PATH says whether the file tool would write there\n")
	} else {
		b.WriteString("shell: not fenced (no dsh-fs exec session); dsh-fs stat PATH says whether the file tool would write there\n")
	}
	if noExecOn(runtime.GOOS) == "" {
		b.WriteString(supervisor.NetworkContextLine(p))
	}
	fmt.Fprintf(&b, "a denied call fails with FS_SANDBOX_DENIED and %s\n", policy.Marker(p.Mode))
	b.WriteString("flags, variables and config files can only narrow this fence")
	if p.Approval != policy.ApprovalNever {
		b.WriteString("; only --escalate, approved by a person, widens it")
	}
	b.WriteString("\n")
	switch p.Approval {
	case policy.ApprovalNever:
		b.WriteString("escalation: disabled; ask the user to change the policy\n")
	case policy.ApprovalSupervisor:
		fmt.Fprintf(&b, "escalation: only under a dsh-fs exec session, whose person approves; retry one denied call with --escalate <mode> (up to %s)\n", p.MaxMode)
	default:
		fmt.Fprintf(&b, "escalation: retry one denied call with --escalate <mode> (up to %s) only when the user agrees\n", p.MaxMode)
	}
	b.WriteString("</sandbox:policy>\n")
	return b.String()
}
