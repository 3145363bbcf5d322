package policyview

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// A model that meets "Read-only file system", "Permission denied" or an
// empty file in its shell asks `dsh-fs stat PATH` or `dsh-fs denials
// PATH` why (docs/design.md §10), and the supervisor explains a refusal
// it sees in the shell's output the same way: the answer names the layer
// that holds there and the rule, and the way forward. One explainer
// serves all three; rec is the session's record, nil outside a session.

// The layers Explained names.
const (
	LayerNone          = "none"
	LayerNotFenced     = "file tool (no session: the shell is not fenced)"
	LayerShellMay      = "file tool (the shell may write it)"
	LayerReadOnlyBind  = "mount (read-only bind)"
	LayerReadOnlyTree  = "mount (read-only tree)"
	LayerLandlock      = "landlock"
	LayerHidden        = "mount (hidden)"
	LayerNoMountLayer  = "file tool (no mount layer: the shell reads it)"
	escalationNoWidens = "no escalation widens the shell"
)

// Explained is what the shell meets doing op at a path: the layer and
// rule that refuse it, or that nothing does.
type Explained struct {
	Path       string `json:"path"`
	Resolved   string `json:"resolved"`
	Op         string `json:"op"`
	Layer      string `json:"layer"`
	Rule       string `json:"rule"`
	Escalation string `json:"escalation"`
	WayForward string `json:"way_forward,omitempty"`
}

// Refused says a layer refuses the op.
func (e Explained) Refused() bool { return e.Layer != LayerNone }

// ExplainWrite says what the shell meets writing at t under p, as stat
// does.
func ExplainWrite(p policy.Policy, rec *wire.Record, f *sandbox.Fence, t sandbox.Target) Explained {
	v := f.WriteVerdict(t)
	rule, forward := ShellAccess(p, rec, t, v)
	e := Explained{Path: t.Given, Resolved: t.Path, Op: "write", Layer: LayerNone, Rule: rule, Escalation: "no", WayForward: forward}
	if v.Reason == "" {
		return e
	}
	e.Layer = writeLayer(rec, t, v)
	if v.Needed != "" && !v.Needed.Wider(p.MaxMode) && p.Approval != policy.ApprovalNever {
		e.Escalation = fmt.Sprintf("for one change through the file tool: dsh-fs write %s --escalate %s, which the approval (%s) decides; %s", t.Given, v.Needed, p.Approval, escalationNoWidens)
	}
	return e
}

// writeLayer names the layer that refuses the shell's write at t (the
// fence's verdict v), as the session's record describes its layers.
func writeLayer(rec *wire.Record, t sandbox.Target, v sandbox.Verdict) string {
	switch {
	case rec == nil:
		return LayerNotFenced
	case v.Reason == policy.ReasonProtected:
		if m := rec.Shell.Mounts; m != nil && slices.ContainsFunc(m.ReadOnly, func(p string) bool { return sandbox.Beneath(p, t.Path) }) {
			return LayerReadOnlyBind
		}
		return LayerShellMay
	case rec.Shell.OutsideReadOnlyHeld:
		return LayerReadOnlyTree
	case rec.Shell.Landlock > 0:
		return LayerLandlock
	}
	return LayerNone
}

// ExplainRead says what the shell meets reading t: deny_read hides it,
// or nothing refuses it.
func ExplainRead(rec *wire.Record, f *sandbox.Fence, t sandbox.Target) Explained {
	e := Explained{Path: t.Given, Resolved: t.Path, Op: "read", Layer: LayerNone, Rule: "readable: nothing refuses a read there", Escalation: "no"}
	var de *policy.DeniedError
	if !errors.As(f.CheckRead("read", t), &de) {
		return e
	}
	e.Layer, e.Rule = LayerNotFenced, "deny_read ("+de.Matched+")"
	if rec != nil {
		e.Layer = LayerNoMountLayer
		if rec.Shell.Mounts != nil {
			e.Layer = LayerHidden
			e.Rule += ": the shell finds it empty where it existed when the session started; a file created since is not hidden from the shell"
		}
	}
	e.WayForward = "no escalation lifts it; for good, a person removes " + de.Matched + " from deny_read in a trusted config"
	return e
}

// ShellAccess says what the model's shell meets when it writes at t under
// p in the session rec (the fence's verdict v on t), and the way forward
// where the write is refused: one escalated call, or the trusted setting
// a person would change.
func ShellAccess(p policy.Policy, rec *wire.Record, t sandbox.Target, v sandbox.Verdict) (shell, forward string) {
	forward = wayForward(p, t, v)
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
	case policy.ReasonOutsideRoots:
		return "outside the writable roots: " + layer, forward
	case policy.ReasonReadOnly:
		return "a read-only session: " + layer, forward
	case policy.ReasonProtected:
		if m := rec.Shell.Mounts; m != nil && slices.ContainsFunc(m.ReadOnly, func(p string) bool { return sandbox.Beneath(p, t.Path) }) {
			return fmt.Sprintf("protected (%s): bound read-only in the shell, writes fail with \"Read-only file system\"", v.Matched), forward
		}
		return fmt.Sprintf("protected (%s): it did not exist when the session started, so the shell may make it; the file tool refuses it, and code-running git parts made there are neutralized when the session ends", v.Matched), forward
	}
	return v.Reason + ": " + layer, forward
}

// shellWriteLayer says how the shell's writes fail outside the writable
// roots, as the session's record describes its layers.
func shellWriteLayer(sh wire.Shell) string {
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
func wayForward(p policy.Policy, t sandbox.Target, v sandbox.Verdict) string {
	var ways []string
	if v.Needed != "" && !v.Needed.Wider(p.MaxMode) && p.Approval != policy.ApprovalNever {
		ways = append(ways, fmt.Sprintf("for one change, dsh-fs write %s --escalate %s (or edit), which the approval (%s) decides", t.Given, v.Needed, p.Approval))
	}
	switch v.Reason {
	case policy.ReasonOutsideRoots:
		ways = append(ways, "for good, a person adds the folder to writable_roots in a trusted config (dsh-fs policy lists them)")
	case policy.ReasonProtected:
		if slices.Contains(p.Protected, v.Matched) {
			ways = append(ways, fmt.Sprintf("for good, a person removes %s from protected in a trusted config", v.Matched))
		} else {
			// The git rule, the trusted config paths: no setting lifts them.
			ways = append(ways, "no setting lifts it: the parts of a git directory that run code or redirect git (config, hooks/, …) and the trusted config paths stay protected")
		}
	case policy.ReasonReadOnly:
		ways = append(ways, "for good, a person sets mode: workspace-write in a trusted config")
	}
	return strings.Join(ways, "; ")
}
