package request

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// start is the start of a workspace-write call in ws whose approval is
// a, without the kernel layer (as exec).
func (l layout) start(a policy.Approval) Start {
	return Start{Policy: policy.Policy{
		Mode: policy.WorkspaceWrite, Cwd: l.ws, Enforce: policy.EnforceOff, MaxMode: policy.DangerFullAccess,
		Approval: a, Protected: policy.DefaultProtected,
	}, Bounds: l.exec().bounds}
}

// TestBeginRefusesWhatCannotBeAsked: an unknown mode, a reason with no
// escalation or too long a reason is FS_INVALID_ARGUMENT, named as the
// front end's user gives it; the Exec still comes back, in the policy's
// mode and with no escalation: a write outside the roots stays denied
// even where the approval would grant one.
func TestBeginRefusesWhatCannotBeAsked(t *testing.T) {
	flags := Names{Escalate: "--escalate", Reason: "--reason"}
	for _, tc := range []struct {
		name             string
		escalate, reason string
		names            Names
		want             string
	}{
		{"unknown mode", "root", "", Names{}, `escalate: unknown mode "root"`},
		{"unknown mode, a flag", "root", "", flags, `flag --escalate: unknown mode "root"`},
		{"reason alone", "", "it must", Names{}, "reason: says why an escalation is needed, in at most 1000 bytes; give it with escalate"},
		{"reason alone, a flag", "", "it must", flags, "flag --reason: says why an escalation is needed, in at most 1000 bytes; give it with --escalate"},
		{"reason too long", "danger-full-access", strings.Repeat("x", policy.MaxModelReason+1), Names{}, "reason: says why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			s := l.start(policy.ApprovalTrust)
			s.Escalate, s.Reason, s.Names = tc.escalate, tc.reason, tc.names
			x, err := Begin(s)
			wantCode(t, err, fserr.InvalidArgument)
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want it to start %q", err, tc.want)
			}
			if x == nil || x.Fence().Mode() != policy.WorkspaceWrite {
				t.Fatalf("Begin gave %v, want the Exec of the policy's mode", x)
			}
			o := filepath.Join(l.outside, "o.txt")
			_, err = x.Run(Write{Path: o, Content: []byte("w\n"), Overwrite: true})
			wantCode(t, err, fserr.SandboxDenied)
			if l.read(t, "outside/o.txt") != "o\n" || x.Fence().Escalated() {
				t.Fatal("a refused start escalated")
			}
		})
	}
}

// TestBeginSetsTheEscalation: the escalation asked for goes to the
// fence with the policy's approver and what the front end adds to it
// (HandOver, GrantRefusal); the To a front end sets is not the one asked.
func TestBeginSetsTheEscalation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approver policy.Approver
		check    func(t *testing.T, l layout, err error)
	}{
		{"the policy's approver", policy.Approver{To: policy.ReadOnly}, func(t *testing.T, l layout, err error) {
			if err != nil || l.read(t, "outside/o.txt") != "w\n" {
				t.Fatalf("approval trust: %v, outside/o.txt %q", err, l.read(t, "outside/o.txt"))
			}
		}},
		{"elsewhere", policy.Approver{HandOver: true}, func(t *testing.T, l layout, err error) {
			var ee *policy.HandedOverError
			if !errors.As(err, &ee) || ee.To != policy.DangerFullAccess {
				t.Fatalf("error %v, want the call handed over to run in danger-full-access", err)
			}
		}},
		{"no grant", policy.Approver{GrantRefusal: "no escalated path here"}, func(t *testing.T, l layout, err error) {
			wantCode(t, err, fserr.SandboxDenied)
			if !strings.Contains(err.Error(), "no escalated path here") {
				t.Fatalf("error %v does not say why it was refused", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			s := l.start(policy.ApprovalTrust)
			s.Escalate, s.Approver = string(policy.DangerFullAccess), tc.approver
			x, err := Begin(s)
			if err != nil {
				t.Fatal(err)
			}
			_, err = x.Run(Write{Path: filepath.Join(l.outside, "o.txt"), Content: []byte("w\n"), Overwrite: true})
			tc.check(t, l, err)
			if err != nil && l.read(t, "outside/o.txt") != "o\n" {
				t.Fatal("a refused or handed-over call wrote")
			}
		})
	}
}

// memory is a Memory that keeps what it is given.
type memory map[string][]byte

func (m memory) Remember(content []byte) { m[string(content)] = content }
func (m memory) Recall(string) []byte    { return nil }

// TestBeginRemembers: the Exec keeps its reads in the start's memory.
func TestBeginRemembers(t *testing.T) {
	l := newLayout(t)
	s := l.start(policy.ApprovalNever)
	m := memory{}
	s.Memory = m
	x, err := Begin(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(Read{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["one\ntwo\nthree\n"]; !ok || len(m) != 1 {
		t.Fatalf("memory holds %q, want a.txt's content", m)
	}
}
