package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

func TestEscalation(t *testing.T) {
	refuse := func(policy.EscalationRequest) error { return errors.New("the user said no thanks") }
	grant := func(policy.EscalationRequest) error { return nil }
	for _, tc := range []struct {
		name     string
		mode     policy.Mode
		maxMode  policy.Mode
		approval policy.Approval
		to       policy.Mode
		ask      func(policy.EscalationRequest) error // nil: never expected to be asked
		path     string

		pass     bool
		mode2    policy.Mode // the fence's mode afterwards
		reason   string      // on denial
		refusal  string      // a substring of DeniedError.Refusal; "" for none
		askCalls int
	}{
		{name: "trust: read-only to workspace-write inside", mode: policy.ReadOnly, approval: policy.ApprovalTrust, to: policy.WorkspaceWrite, path: "f",
			pass: true, mode2: policy.WorkspaceWrite},
		{name: "trust: read-only to workspace-write outside", mode: policy.ReadOnly, approval: policy.ApprovalTrust, to: policy.WorkspaceWrite, path: "../out/x",
			reason: policy.ReasonReadOnly, refusal: "--escalate workspace-write would not allow it", mode2: policy.ReadOnly},
		{name: "trust: read-only to workspace-write, protected", mode: policy.ReadOnly, approval: policy.ApprovalTrust, to: policy.WorkspaceWrite, path: ".git/config",
			reason: policy.ReasonReadOnly, refusal: "would not allow it", mode2: policy.ReadOnly},
		{name: "trust: read-only to danger outside", mode: policy.ReadOnly, approval: policy.ApprovalTrust, to: policy.DangerFullAccess, path: "../out/x",
			pass: true, mode2: policy.DangerFullAccess},
		{name: "trust: workspace-write to danger outside", mode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.DangerFullAccess, path: "../out/x",
			pass: true, mode2: policy.DangerFullAccess},
		{name: "trust: workspace-write to danger, protected", mode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.DangerFullAccess, path: ".git/config",
			pass: true, mode2: policy.DangerFullAccess},
		{name: "never", mode: policy.ReadOnly, approval: policy.ApprovalNever, to: policy.WorkspaceWrite, path: "f",
			reason: policy.ReasonNotApproved, refusal: "approval is never", mode2: policy.ReadOnly},
		{name: "never, workspace-write", mode: policy.WorkspaceWrite, approval: policy.ApprovalNever, to: policy.DangerFullAccess, path: "../out/x",
			reason: policy.ReasonNotApproved, refusal: "approval is never", mode2: policy.WorkspaceWrite},
		{name: "supervisor: none outside dsh-fs exec, nobody asked", mode: policy.WorkspaceWrite, approval: policy.ApprovalSupervisor, to: policy.DangerFullAccess, path: "../out/x",
			ask: grant, reason: policy.ReasonNotApproved, refusal: "no dsh-fs exec supervisor to ask", mode2: policy.WorkspaceWrite},
		{name: "above max_mode", mode: policy.WorkspaceWrite, maxMode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.DangerFullAccess, path: "../out/x",
			reason: policy.ReasonOutsideRoots, refusal: policy.ReasonAboveMaxMode, mode2: policy.WorkspaceWrite},
		{name: "above max_mode is refused before asking", mode: policy.ReadOnly, maxMode: policy.WorkspaceWrite, approval: policy.ApprovalTTY, to: policy.DangerFullAccess, path: "f",
			ask: grant, reason: policy.ReasonReadOnly, refusal: policy.ReasonAboveMaxMode, mode2: policy.ReadOnly},
		{name: "within max_mode", mode: policy.ReadOnly, maxMode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.WorkspaceWrite, path: "f",
			pass: true, mode2: policy.WorkspaceWrite},
		{name: "tty granted", mode: policy.ReadOnly, approval: policy.ApprovalTTY, to: policy.WorkspaceWrite, path: "f", ask: grant, askCalls: 1,
			pass: true, mode2: policy.WorkspaceWrite},
		{name: "tty refused", mode: policy.ReadOnly, approval: policy.ApprovalTTY, to: policy.WorkspaceWrite, path: "f", ask: refuse, askCalls: 1,
			reason: policy.ReasonNotApproved, refusal: "the user said no thanks", mode2: policy.ReadOnly},
		{name: "tty, escalation would not allow it: not asked", mode: policy.ReadOnly, approval: policy.ApprovalTTY, to: policy.WorkspaceWrite, path: "../out/x", ask: grant,
			reason: policy.ReasonReadOnly, refusal: "would not allow it", mode2: policy.ReadOnly},
		{name: "not wider: no escalation", mode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.WorkspaceWrite, path: "../out/x",
			reason: policy.ReasonOutsideRoots, refusal: "--escalate workspace-write would not allow it", mode2: policy.WorkspaceWrite},
		{name: "narrower: no escalation", mode: policy.WorkspaceWrite, approval: policy.ApprovalTrust, to: policy.ReadOnly, path: "../out/x",
			reason: policy.ReasonOutsideRoots, refusal: "--escalate read-only would not allow it", mode2: policy.WorkspaceWrite},
		{name: "allowed anyway: no escalation", mode: policy.WorkspaceWrite, approval: policy.ApprovalTTY, to: policy.DangerFullAccess, path: "f", ask: grant,
			pass: true, mode2: policy.WorkspaceWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			p := testPolicy(root, tc.mode)
			p.Approval = tc.approval
			if tc.maxMode != "" {
				p.MaxMode = tc.maxMode
			}
			fence := NewFence(p)
			calls := 0
			var req policy.EscalationRequest
			fence.SetApprover(policy.Approver{To: tc.to, Terminal: func(r policy.EscalationRequest) error {
				calls++
				req = r
				if tc.ask == nil {
					t.Errorf("asked for %+v, want no question", r)
					return errors.New("unexpected question")
				}
				return tc.ask(r)
			}})
			target, err := fence.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			err = checkAndEscalate(fence, &target)
			if calls != tc.askCalls {
				t.Errorf("asked %d times, want %d", calls, tc.askCalls)
			}
			if calls > 0 && (req.Op != "write" || req.Path != tc.path || req.From != tc.mode || req.To != tc.to || req.Reason == "") {
				t.Errorf("EscalationRequest = %+v", req)
			}
			if fence.Mode() != tc.mode2 {
				t.Errorf("Mode() = %s, want %s", fence.Mode(), tc.mode2)
			}
			if fence.Escalated() != (tc.mode2 != tc.mode) {
				t.Errorf("Escalated() = %v", fence.Escalated())
			}
			if tc.pass {
				if err != nil {
					t.Fatalf("CheckWrite: %v", err)
				}
				if tc.mode2 == policy.WorkspaceWrite && target.root != filepath.Join(root, "ws") {
					t.Errorf("escalated to workspace-write, Root = %q", target.root)
				}
				return
			}
			de := deniedAs(t, err)
			if de.Reason != tc.reason || de.Mode != tc.mode {
				t.Errorf("reason %q mode %s; want %q, %s", de.Reason, de.Mode, tc.reason, tc.mode)
			}
			if tc.refusal == "" && de.Refusal != "" || !strings.Contains(de.Refusal, tc.refusal) {
				t.Errorf("Refusal = %q, want %q", de.Refusal, tc.refusal)
			}
			if tc.refusal != "" && !strings.Contains(err.Error(), de.Refusal) {
				t.Errorf("Error() = %q does not say the refusal", err)
			}
		})
	}
}

// checkAndEscalate is what a mutation does: check, and put a denial to
// the escalation asked for.
func checkAndEscalate(f *Fence, t *Target) error {
	err := f.CheckWrite("write", t)
	if err != nil {
		err = f.Escalate(err, t, Preview{})
	}
	return err
}

// TestEscalationOnce: a granted escalation covers one widening; a later
// denial on the same fence does not ask again, and a path the approver
// was not shown is FS_STALE (TestEscalationNamesEveryPath).
func TestEscalationOnce(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	p := testPolicy(root, policy.ReadOnly)
	p.Approval = policy.ApprovalTTY
	fence := NewFence(p)
	calls := 0
	fence.SetApprover(policy.Approver{To: policy.WorkspaceWrite, Terminal: func(policy.EscalationRequest) error { calls++; return nil }})
	for _, tc := range []struct {
		path string
		code fserr.Code // "" passes
	}{{"f", ""}, {"d/g", fserr.Stale}, {"../out/x", fserr.SandboxDenied}} {
		target, err := fence.Resolve(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkAndEscalate(fence, &target); fserr.CodeOf(err) != tc.code && !(err == nil && tc.code == "") {
			t.Errorf("CheckWrite(%s) = %v, want %q", tc.path, err, tc.code)
		}
	}
	if calls != 1 || !fence.Escalated() || fence.Mode() != policy.WorkspaceWrite {
		t.Errorf("asked %d times, Escalated %v, Mode %s; want 1, true, workspace-write", calls, fence.Escalated(), fence.Mode())
	}
}

// TestDeniedHintFromFence: the hint a real denial carries follows the
// policy's approval and ceiling.
func TestDeniedHintFromFence(t *testing.T) {
	for _, tc := range []struct {
		mode     policy.Mode
		maxMode  policy.Mode
		approval policy.Approval
		path     string
		want     string
	}{
		{policy.ReadOnly, policy.DangerFullAccess, policy.ApprovalTTY, "f", "retry this one call with --escalate workspace-write; a person at the terminal must approve it"},
		{policy.ReadOnly, policy.DangerFullAccess, policy.ApprovalTrust, "f", "if the user agrees, retry this one call with --escalate workspace-write"},
		{policy.ReadOnly, policy.DangerFullAccess, policy.ApprovalNever, "f", "this needs workspace-write, and escalation is disabled here (approval: never): ask the user to change the policy"},
		{policy.WorkspaceWrite, policy.WorkspaceWrite, policy.ApprovalTrust, "../out/x", "this needs danger-full-access, above this deployment's max_mode workspace-write: ask the user to change the policy"},
	} {
		root := tempRoot(t)
		makeLayout(t, root, fenceLayout...)
		p := testPolicy(root, tc.mode)
		p.MaxMode, p.Approval = tc.maxMode, tc.approval
		fence := NewFence(p)
		target, err := fence.Resolve(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		de := deniedAs(t, fence.CheckWrite("edit", &target))
		if got := de.Hint(); got != tc.want {
			t.Errorf("%s %s %s: Hint() = %q\nwant %q", tc.mode, tc.approval, tc.path, got, tc.want)
		}
		if want := "[sandbox: file access denied under " + string(tc.mode) + " mode]"; de.Marker() != want {
			t.Errorf("Marker() = %q, want %q", de.Marker(), want)
		}
	}
}

// escalateUnderEveryApproval puts a write outside the roots, on a
// workspace-write fence asking for danger-full-access, to Escalate under
// each approval, with setup applied to the fence first, and hands the
// result to check. Nobody may be asked and nothing widen: every asker
// of the Approver counts its calls, and the fence's mode must stay.
// (approval's TestGrantRefusalRunsNoCommand shows the same with a real
// approval_command.)
func escalateUnderEveryApproval(t *testing.T, setup func(*policy.Approver), check func(t *testing.T, approval policy.Approval, err error)) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	for _, approval := range []policy.Approval{policy.ApprovalSupervisor, policy.ApprovalNever, policy.ApprovalTTY, policy.ApprovalCommand, policy.ApprovalTrust} {
		t.Run(string(approval), func(t *testing.T) {
			p := testPolicy(root, policy.WorkspaceWrite)
			p.Approval = approval
			fence := NewFence(p)
			asked := 0
			count := func(policy.EscalationRequest) error { asked++; return nil }
			a := policy.Approver{To: policy.DangerFullAccess, Terminal: count, Command: count}
			setup(&a)
			fence.SetApprover(a)
			target, err := fence.Resolve("../out/x")
			if err != nil {
				t.Fatal(err)
			}
			err = fence.CheckWrite("write", &target)
			if fence.asksApprover(err) {
				t.Error("asksApprover = true: a preview would be made for nobody")
			}
			check(t, approval, fence.Escalate(err, &target, Preview{}))
			if asked != 0 || fence.Escalated() || fence.Mode() != policy.WorkspaceWrite {
				t.Errorf("asked %d, Escalated %v, Mode %s", asked, fence.Escalated(), fence.Mode())
			}
		})
	}
}

// TestEscalationGrantRefusal: a fence told it cannot carry out a grant
// (Approver.GrantRefusal, dsh-fs mcp's) refuses under every approval, asks no one
// (tty's ask and command's approver are never run), and its mode stays.
func TestEscalationGrantRefusal(t *testing.T) {
	escalateUnderEveryApproval(t, func(a *policy.Approver) { a.GrantRefusal = "not here" }, func(t *testing.T, approval policy.Approval, err error) {
		var de *policy.DeniedError
		if !errors.As(err, &de) || de.Reason != policy.ReasonNotApproved {
			t.Fatalf("Escalate = %v", err)
		}
		if want := map[policy.Approval]string{policy.ApprovalNever: "approval is never", policy.ApprovalSupervisor: "supervisor"}[approval]; want != "" {
			if !strings.Contains(de.Refusal, want) {
				t.Errorf("refusal %q lacks %q", de.Refusal, want)
			}
		} else if !strings.Contains(de.Refusal, "not here") {
			t.Errorf("refusal %q lacks the no-grant reason", de.Refusal)
		}
	})
}

// TestEscalationHandOver: Approver.HandOver hands an escalation that could lift the denial to the
// front end, asking no one and widening nothing here, whatever the
// approval; one that could not lift it keeps its own refusal.
func TestEscalationHandOver(t *testing.T) {
	escalateUnderEveryApproval(t, func(a *policy.Approver) { a.HandOver = true }, func(t *testing.T, _ policy.Approval, err error) {
		var ee *policy.HandedOverError
		if !errors.As(err, &ee) || ee.To != policy.DangerFullAccess || ee.Denied.Reason != policy.ReasonOutsideRoots {
			t.Fatalf("Escalate = %#v, want an HandedOverError to danger-full-access", err)
		}
		if fserr.CodeOf(err) != fserr.SandboxDenied {
			t.Errorf("unhandled, it is %s, not the denial", fserr.CodeOf(err))
		}
	})
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	p := testPolicy(root, policy.WorkspaceWrite)
	p.MaxMode = policy.WorkspaceWrite
	fence := NewFence(p)
	fence.SetApprover(policy.Approver{To: policy.DangerFullAccess, HandOver: true})
	target, _ := fence.Resolve("../out/x")
	err := fence.Escalate(fence.CheckWrite("write", &target), &target, Preview{})
	var ee *policy.HandedOverError
	if errors.As(err, &ee) || !strings.Contains(deniedAs(t, err).Refusal, policy.ReasonAboveMaxMode) {
		t.Errorf("above max_mode: Escalate = %v, want the denial with its refusal", err)
	}
}

// TestApproverAskers: the fence puts an escalation to the Approver's
// asker of the policy's approval, and only to it; one the front end left
// nil refuses, naming what is missing.
func TestApproverAskers(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	for _, tc := range []struct {
		approval                  policy.Approval
		terminal, command, superv bool // which askers the Approver has
		want                      string
		refusal                   string // "" when granted
	}{
		{approval: policy.ApprovalTTY, terminal: true, command: true, superv: true, want: "terminal"},
		{approval: policy.ApprovalCommand, terminal: true, command: true, superv: true, want: "command"},
		{approval: policy.ApprovalSupervisor, terminal: true, command: true, superv: true, want: "supervisor"},
		{approval: policy.ApprovalTTY, command: true, superv: true, refusal: "no terminal to ask"},
		{approval: policy.ApprovalCommand, terminal: true, superv: true, refusal: "no approval_command runner"},
		{approval: policy.ApprovalSupervisor, terminal: true, command: true, refusal: "no dsh-fs exec supervisor to ask"},
	} {
		t.Run(fmt.Sprintf("%s/%v%v%v", tc.approval, tc.terminal, tc.command, tc.superv), func(t *testing.T) {
			p := testPolicy(root, policy.WorkspaceWrite)
			p.Approval = tc.approval
			fence := NewFence(p)
			var asked []string
			asker := func(name string, have bool) func(policy.EscalationRequest) error {
				if !have {
					return nil
				}
				return func(policy.EscalationRequest) error { asked = append(asked, name); return nil }
			}
			fence.SetApprover(policy.Approver{To: policy.DangerFullAccess, Terminal: asker("terminal", tc.terminal),
				Command: asker("command", tc.command), Supervisor: asker("supervisor", tc.superv)})
			target, err := fence.Resolve("../out/x")
			if err != nil {
				t.Fatal(err)
			}
			err = checkAndEscalate(fence, &target)
			if tc.refusal != "" {
				if de := deniedAs(t, err); !strings.Contains(de.Refusal, tc.refusal) || len(asked) != 0 {
					t.Errorf("refusal %q (asked %v), want %q and nobody asked", de.Refusal, asked, tc.refusal)
				}
				return
			}
			if err != nil || len(asked) != 1 || asked[0] != tc.want || fence.Mode() != policy.DangerFullAccess {
				t.Errorf("err %v, asked %v, mode %s; want granted by %s alone", err, asked, fence.Mode(), tc.want)
			}
		})
	}
}

// TestEscalationNamesEveryPath: an escalation's request names every path
// of its preview, with what the call does there, canonical; once
// approved, the call may change those paths and no other. Before, the
// request carried only the denied path, and the widened mode let the
// call change any path: an approver deciding by path approved writes it
// never saw named.
func TestEscalationNamesEveryPath(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	for _, approval := range []policy.Approval{policy.ApprovalTTY, policy.ApprovalCommand, policy.ApprovalTrust} {
		t.Run(string(approval), func(t *testing.T) {
			p := testPolicy(root, policy.WorkspaceWrite)
			p.Approval = approval
			fence := NewFence(p)
			var asked []policy.EscalationRequest
			ask := func(r policy.EscalationRequest) error { asked = append(asked, r); return nil }
			fence.SetApprover(policy.Approver{To: policy.DangerFullAccess, Terminal: ask, Command: ask})
			resolve := func(path string) Target {
				tg, err := fence.Resolve(path)
				if err != nil {
					t.Fatal(err)
				}
				return tg
			}
			in, x, moved, other := resolve("f"), resolve("../out/x"), resolve("../out/y"), resolve("../out/z")
			paths := []policy.EscalationPath{PathOf(policy.PathUpdate, in), PathOf(policy.PathMoveFrom, x), PathOf(policy.PathMoveTo, moved)}
			err := fence.CheckWrite("patch", &x)
			if err = fence.Escalate(err, &x, Preview{Paths: paths}); err != nil {
				t.Fatalf("Escalate: %v", err)
			}
			if approval != policy.ApprovalTrust {
				if len(asked) != 1 || fmt.Sprint(asked[0].Paths) != fmt.Sprint(paths) {
					t.Fatalf("asked %+v, want one request naming %+v", asked, paths)
				}
				if want := filepath.Join(root, "out/y"); asked[0].Paths[2].Resolved != want || asked[0].Paths[2].Op != policy.PathMoveTo {
					t.Errorf("move target %+v, want move_to %s", asked[0].Paths[2], want)
				}
			}
			for _, tc := range []struct {
				t    Target
				pass bool
			}{{in, true}, {x, true}, {moved, true}, {other, approval == policy.ApprovalTrust}} {
				err := fence.CheckWrite("patch", &tc.t)
				if tc.pass != (err == nil) || !tc.pass && fserr.CodeOf(err) != fserr.Stale {
					t.Errorf("%s: CheckWrite %s = %v, want pass %v (else FS_STALE)", approval, tc.t.Given, err, tc.pass)
				}
			}
			// The open decides again, on the list as on the mode.
			if approval != policy.ApprovalTrust {
				if d, _, err := fence.openDir("patch", other, false); err == nil || fserr.CodeOf(err) != fserr.Stale {
					if d != nil {
						d.Close()
					}
					t.Errorf("openDir %s = %v, want FS_STALE", other.Given, err)
				}
			}
		})
	}
}

// TestEscalationOnePath: a change of one path whose preview names none
// (mkdir) approves that path alone.
func TestEscalationOnePath(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	p := testPolicy(root, policy.WorkspaceWrite)
	p.Approval = policy.ApprovalCommand
	fence := NewFence(p)
	var req policy.EscalationRequest
	fence.SetApprover(policy.Approver{To: policy.DangerFullAccess, Command: func(r policy.EscalationRequest) error { req = r; return nil }})
	x, _ := fence.Resolve("../out/x")
	if err := checkAndEscalate(fence, &x); err != nil {
		t.Fatal(err)
	}
	if len(req.Paths) != 1 || req.Paths[0] != (policy.EscalationPath{Op: "write", Path: "../out/x", Resolved: filepath.Join(root, "out/x")}) {
		t.Errorf("Paths = %+v, want the write of ../out/x alone", req.Paths)
	}
}
