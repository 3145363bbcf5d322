package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// A model that meets "Read-only file system", "Permission denied" or an
// empty file in its shell asks `dsh-fs stat PATH` why (docs/design.md
// §10): the answer names the layer that holds there and the rule, and the
// way forward, in one call.

// shellAccess says what the model's shell meets when it writes at t under
// the settings s (the fence's verdict v on t), and the way forward where
// the write is refused: one escalated call, or the trusted setting a
// person would change.
func shellAccess(s *config.Settings, t sandbox.Target, v sandbox.Verdict) (shell, forward string) {
	p := s.Policy
	forward = wayForward(p, t, v)
	rec := s.Session
	if rec == nil {
		if v.Reason == "" {
			return "writable; the shell is not fenced here (no dsh-fs exec session)", ""
		}
		return "the shell is not fenced here (no dsh-fs exec session); the file tool refuses it: " + v.Reason, forward
	}
	layer := shellWriteLayer(rec.Shell)
	switch v.Reason {
	case "":
		return "writable in the shell too (beneath the writable roots)", ""
	case sandbox.ReasonOutsideRoots:
		return "outside the writable roots: " + layer, forward
	case sandbox.ReasonReadOnly:
		return "a read-only session: " + layer, forward
	case sandbox.ReasonProtected:
		if m := rec.Shell.Mounts; m != nil && slices.ContainsFunc(m.ReadOnly, func(p string) bool { return sandbox.Beneath(p, t.Path) }) {
			return fmt.Sprintf("protected (%s): bound read-only in the shell, writes fail with \"Read-only file system\"", v.Matched), forward
		}
		return fmt.Sprintf("protected (%s): it did not exist when the session started, so the shell may make it; the file tool refuses it, and code-running git parts made there are neutralized when the session ends", v.Matched), forward
	}
	return v.Reason + ": " + layer, forward
}

// shellWriteLayer says how the shell's writes fail outside the writable
// roots, as the session's record describes its layers.
func shellWriteLayer(sh session.Shell) string {
	switch {
	case sh.OutsideReadOnlyHeld:
		return "the mount layer's read-only tree makes writes, chmod and chown fail with \"Read-only file system\""
	case sh.Landlock > 0:
		return "Landlock makes writes fail with \"Permission denied\""
	}
	return "the shell is not fenced: " + sh.Kernel
}

// wayForward is what lifts the refusal v of a write at t: one call with
// --escalate where the approval lets one through, and the trusted setting
// a person would change for good.
func wayForward(p sandbox.Policy, t sandbox.Target, v sandbox.Verdict) string {
	var ways []string
	if v.Needed != "" && !v.Needed.Wider(p.MaxMode) && p.Approval != sandbox.ApprovalNever {
		ways = append(ways, fmt.Sprintf("for one change, dsh-fs write %s --escalate %s (or edit), which the approval (%s) decides", t.Given, v.Needed, p.Approval))
	}
	switch v.Reason {
	case sandbox.ReasonOutsideRoots:
		ways = append(ways, "for good, a person adds the folder to writable_roots in a trusted config (dsh-fs policy lists them)")
	case sandbox.ReasonProtected:
		if slices.Contains(p.Protected, v.Matched) {
			ways = append(ways, fmt.Sprintf("for good, a person removes %s from protected in a trusted config", v.Matched))
		} else {
			// The git rule, the trusted config paths: no setting lifts them.
			ways = append(ways, "no setting lifts it: the parts of a git directory that run code or redirect git (config, hooks/, …) and the trusted config paths stay protected")
		}
	case sandbox.ReasonReadOnly:
		ways = append(ways, "for good, a person sets mode: workspace-write in a trusted config")
	}
	return strings.Join(ways, "; ")
}
