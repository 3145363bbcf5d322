//go:build unix

package approval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// fenceAt is a workspace-write fence whose only writable root is a temp
// workspace, with an approval_command of argv and timeout seconds, and
// the path outside the workspace its escalation is asked about.
func fenceAt(t *testing.T, approval policy.Approval, argv []string, timeout int) (*policy.Policy, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws", "out"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &policy.Policy{Mode: policy.WorkspaceWrite, Cwd: filepath.Join(root, "ws"), Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: approval, ApprovalCommand: argv, ApprovalTimeoutSeconds: timeout}
	return p, "../out/x"
}

// escalate checks a write of path on a fence of p with New's approver
// (a changes it first, when not nil) and puts the denial to Escalate.
func escalate(t *testing.T, p policy.Policy, path string, change func(*policy.Approver)) (*sandbox.Fence, error) {
	t.Helper()
	f := sandbox.NewFence(p)
	a := New(p, policy.DangerFullAccess)
	if change != nil {
		change(&a)
	}
	f.SetApprover(a)
	target, err := f.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckWrite("write", &target)
	return f, f.Escalate(err, &target, sandbox.Preview{})
}

// TestNewRunsTheApprovalCommand: the approver New makes runs the
// policy's approval_command, with its timeout, and the fence widens only
// on exit status 0.
func TestNewRunsTheApprovalCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		timeout int
		refusal string // "" when granted
	}{
		{"exit 0 approves", []string{lookPath(t, "true")}, 0, ""},
		{"exit 1 refuses", []string{lookPath(t, "false")}, 0, "approval_command exited with status 1"},
		{"no answer in time refuses", []string{lookPath(t, "sleep"), "10"}, 1, "approval_command gave no answer within 1 s"},
		{"missing program refuses", []string{"/nonexistent/approver"}, 0, "approval_command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, path := fenceAt(t, policy.ApprovalCommand, tc.argv, tc.timeout)
			f, err := escalate(t, *p, path, nil)
			if tc.refusal == "" {
				if err != nil || f.Mode() != policy.DangerFullAccess {
					t.Fatalf("Escalate = %v, mode %s; want granted", err, f.Mode())
				}
				return
			}
			var de *policy.DeniedError
			if !errors.As(err, &de) || de.Reason != policy.ReasonNotApproved || !strings.Contains(de.Refusal, tc.refusal) || f.Mode() != policy.WorkspaceWrite {
				t.Errorf("Escalate = %v, mode %s; want refused with %q", err, f.Mode(), tc.refusal)
			}
		})
	}
}

// TestGrantRefusalRunsNoCommand: with GrantRefusal set (dsh-fs mcp's), or
// HandOver, a real approval_command is never run: it would leave a file.
func TestGrantRefusalRunsNoCommand(t *testing.T) {
	record := filepath.Join(t.TempDir(), "asked")
	for name, change := range map[string]func(*policy.Approver){
		"GrantRefusal": func(a *policy.Approver) { a.GrantRefusal = "not here" },
		"HandOver":     func(a *policy.Approver) { a.HandOver = true },
	} {
		p, path := fenceAt(t, policy.ApprovalCommand, []string{lookPath(t, "sh"), "-c", "touch " + record}, 10)
		f, err := escalate(t, *p, path, change)
		if err == nil || f.Mode() != policy.WorkspaceWrite {
			t.Errorf("%s: Escalate = %v, mode %s; want refused", name, err, f.Mode())
		}
		if _, err := os.Stat(record); !os.IsNotExist(err) {
			t.Errorf("%s: approval_command ran (%v)", name, err)
		}
	}
	// The same command runs when nothing stops it, so the check above
	// can fail.
	p, path := fenceAt(t, policy.ApprovalCommand, []string{lookPath(t, "sh"), "-c", "touch " + record}, 10)
	if _, err := escalate(t, *p, path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(record); err != nil {
		t.Errorf("approval_command did not run: %v", err)
	}
}
