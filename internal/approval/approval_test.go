//go:build unix

package approval

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestEscapeControl: nothing a model writes into a path or a file can
// move the cursor, recolour, hide or reorder what the person reads.
func TestEscapeControl(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain/path.go", "plain/path.go"},
		{"tab\there", "tab\there"},
		{"a\rb", `a\rb`},
		{"x\x1b[2Ky", `x\x1b[2Ky`},
		{"hide\x1b[8m", `hide\x1b[8m`},
		{"two\nlines", `two\nlines`},
		{"bell\x07 del\x7f", `bell\x07 del\x7f`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"rlo \u202efdp.exe", `rlo \u202efdp.exe`},
		{"bad \xff byte", `bad \xff byte`},
		{"héllo wörld ✓", "héllo wörld ✓"},
	} {
		if got := escapeControl(tc.in); got != tc.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPromptShowsTheChangeEscaped: the question names the call and shows
// the diff, each line escaped, and ends in the y/N question.
func TestPromptShowsTheChangeEscaped(t *testing.T) {
	req := EscalationRequest{Op: "write", Path: "x\r\x1b[2Kharmless? [y/N] \x1b[8m", Resolved: "/out/x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess,
		Reason: policy.ReasonOutsideRoots, DiffText: "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+evil\x1b[1A\n"}
	got := prompt(req)
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("the prompt carries a raw control character: %q", got)
	}
	for _, want := range []string{`write x\r\x1b[2Kharmless? [y/N] \x1b[8m was denied under workspace-write mode (outside writable roots)`,
		"It resolves to /out/x.", "  +++ b/x\n", `  +evil\x1b[1A` + "\n", "Allow this one call under danger-full-access mode? [y/N] "} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "[y/N] ") {
		t.Errorf("the prompt does not end in the question: %q", got)
	}
}

// TestApprovalCommandGetsTheRequest: the approver reads one JSON object
// with the call, the modes, the reason and the diff on its standard input.
func TestApprovalCommandGetsTheRequest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "req.json")
	req := EscalationRequest{Op: "edit", Path: "../x", Resolved: "/w/x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess,
		Reason: policy.ReasonOutsideRoots, Diff: map[string]any{"added": 1, "text": "+y\n"}, DiffText: "+y\n"}
	if err := RunCommand([]string{lookPath(t, "sh"), "-c", `cat > "$0"`, out}, 10, "/home/u", req); err != nil {
		t.Fatalf("approver exiting 0 refused: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("stdin was not one JSON object: %q", raw)
	}
	for k, want := range map[string]any{"op": "edit", "path": "../x", "resolved": "/w/x", "from": "workspace-write",
		"to": "danger-full-access", "reason": "outside writable roots"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if d, _ := got["diff"].(map[string]any); d["text"] != "+y\n" {
		t.Errorf("diff = %v, want the change", got["diff"])
	}
	if err := RunCommand(nil, 10, "", req); err == nil {
		t.Error("an empty approval_command approved")
	}
	if err := RunCommand([]string{"true"}, 10, "", req); err == nil {
		t.Error("an approval_command named by a relative path approved")
	}
}

// TestApprovalCommandEnvironment: the approver runs with an environment of
// its own, not the session's: a PATH, LD_PRELOAD or HOME the model chose
// must not decide which program answers, or how.
func TestApprovalCommandEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	t.Setenv("PATH", t.TempDir()+":"+os.Getenv("PATH"))
	t.Setenv("LD_PRELOAD", "/tmp/evil.so")
	t.Setenv("DSH_FS_MODE", "danger-full-access")
	t.Setenv("HOME", "/nonexistent")
	t.Setenv("LANG", "C.UTF-8")
	req := EscalationRequest{Op: "write", Path: "x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess}
	if err := RunCommand([]string{lookPath(t, "sh"), "-c", `env > "$0"; pwd >> "$0"`, out}, 10, "/home/u", req); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	for _, want := range []string{"PATH=" + approverPath + "\n", "HOME=/home/u\n", "LANG=C.UTF-8\n", "\n/\n"} {
		if !strings.Contains("\n"+got, want) {
			t.Errorf("the approver's environment lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"LD_PRELOAD", "DSH_FS_", "/nonexistent", "evil"} {
		if strings.Contains(got, bad) {
			t.Errorf("the approver's environment carries %q from the session:\n%s", bad, got)
		}
	}
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s here: %v", name, err)
	}
	return p
}

// TestNetworkPrompt: the question about a refused host names it (its
// control characters escaped) and says the answer holds for the session.
func TestNetworkPrompt(t *testing.T) {
	q := prompt(EscalationRequest{Op: policy.OpNetwork, Path: "evil\x1b[2J.test:443", From: policy.WorkspaceWrite, To: policy.WorkspaceWrite, Reason: "not in network_allow"})
	for _, want := range []string{`the network host evil\x1b[2J.test:443`, "not in network_allow", "This is a network host, not a file", "for the rest of this session? [y/N] "} {
		if !strings.Contains(q, want) {
			t.Errorf("prompt %q does not say %q", q, want)
		}
	}
}

// TestApproveHost: a refused host is put to approval_command or the
// supervisor where network_approval says so, with "not approved" in
// place of the escalation's wording when they refuse, and never asked
// otherwise, whatever the file approval is: before, approval: command
// alone put every host to an approver written for files.
func TestApproveHost(t *testing.T) {
	req := EscalationRequest{Op: policy.OpNetwork, Path: "example.test:443", From: policy.WorkspaceWrite, To: policy.WorkspaceWrite}
	for _, a := range []policy.Approval{policy.ApprovalTrust, policy.ApprovalTTY, policy.ApprovalNever, policy.ApprovalCommand, policy.ApprovalSupervisor} {
		for _, na := range []policy.NetworkApproval{"", policy.NetworkApprovalNone} {
			p := policy.Policy{Approval: a, NetworkApproval: na, ApprovalCommand: []string{lookPath(t, "true")}, ApprovalTimeoutSeconds: 10}
			if err := ApproveHost(p, req, func(EscalationRequest) error { return nil }); err == nil || !strings.Contains(err.Error(), "not asked: network_approval is none") {
				t.Errorf("approval %s, network_approval %q approved a host: %v", a, na, err)
			}
		}
	}
	cmd := func(argv ...string) policy.Policy {
		return policy.Policy{Approval: policy.ApprovalNever, NetworkApproval: policy.NetworkApprovalCommand, ApprovalCommand: argv, ApprovalTimeoutSeconds: 10}
	}
	record := filepath.Join(t.TempDir(), "req.json")
	if err := ApproveHost(cmd("/bin/sh", "-c", "cat > "+record), req, nil); err != nil {
		t.Errorf("approval_command exiting 0: %v", err)
	}
	if got, _ := os.ReadFile(record); !strings.HasPrefix(string(got), `{"kind":"network_host","op":"network","path":"example.test:443"`) {
		t.Errorf("the approver got %s, want a request of kind network_host", got)
	}
	if err := ApproveHost(cmd(lookPath(t, "true")), req, nil); err != nil {
		t.Errorf("approval_command exiting 0: %v", err)
	}
	if err := ApproveHost(cmd(lookPath(t, "false")), req, nil); err == nil || !strings.HasPrefix(err.Error(), "not approved: approval_command exited with status 1") {
		t.Errorf("approval_command exiting 1: %v", err)
	}
	sup := policy.Policy{Approval: policy.ApprovalNever, NetworkApproval: policy.NetworkApprovalSupervisor}
	if err := ApproveHost(sup, req, nil); err == nil || !strings.Contains(err.Error(), "no dsh-fs exec supervisor") {
		t.Errorf("no supervisor: %v", err)
	}
	if err := ApproveHost(sup, req, func(r EscalationRequest) error { return nil }); err != nil {
		t.Errorf("the supervisor approved: %v", err)
	}
	no := func(r EscalationRequest) error {
		return errors.New("escalation to " + string(r.To) + " refused: said no")
	}
	if err := ApproveHost(sup, req, no); err == nil || err.Error() != "not approved: said no" {
		t.Errorf("the supervisor refused: %v", err)
	}
}

// TestAnsweredYes: only a line of y or yes, in any case and with spaces
// around it, approves; the prompt is written first.
func TestAnsweredYes(t *testing.T) {
	req := EscalationRequest{Op: "write", Path: "x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess}
	for answer, want := range map[string]bool{"y\n": true, " YES \n": true, "yes": true, "n\n": false, "\n": false, "": false, "yess\n": false, "no y\n": false} {
		var out strings.Builder
		if got := answeredYesOn(strings.NewReader(answer), &out, req); got != want {
			t.Errorf("answer %q: approved %v, want %v", answer, got, want)
		}
		if out.String() != prompt(req) {
			t.Errorf("answer %q: wrote %q, want the prompt", answer, out.String())
		}
	}
}

// TestAskOnTerminal: the supervisor's question on the relayed terminal
// approves on yes and refuses otherwise, naming the supervisor's
// terminal; the input is a real pipe, as the relay's is a real file.
func TestAskOnTerminal(t *testing.T) {
	req := EscalationRequest{Op: "write", Path: "x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess}
	for answer, approve := range map[string]bool{"yes\n": true, "no\n": false} {
		in, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(answer)
		w.Close()
		err = AskOnTerminal(in, out, req)
		in.Close()
		out.Close()
		if (err == nil) != approve || err != nil && !strings.Contains(err.Error(), "not approved at the supervisor's terminal") {
			t.Errorf("answer %q: %v", answer, err)
		}
		if shown, _ := os.ReadFile(out.Name()); !strings.Contains(string(shown), "Allow this one call under danger-full-access mode?") {
			t.Errorf("answer %q: the terminal showed %q", answer, shown)
		}
	}
}
