package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestescapeControl: nothing a model writes into a path or a file can
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
	req := EscalationRequest{Op: "write", Path: "x\r\x1b[2Kharmless? [y/N] \x1b[8m", Resolved: "/out/x", From: WorkspaceWrite, To: DangerFullAccess,
		Reason: ReasonOutsideRoots, DiffText: "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+evil\x1b[1A\n"}
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
	req := EscalationRequest{Op: "edit", Path: "../x", Resolved: "/w/x", From: WorkspaceWrite, To: DangerFullAccess,
		Reason: ReasonOutsideRoots, Diff: map[string]any{"added": 1, "text": "+y\n"}, DiffText: "+y\n"}
	if err := runApprovalCommand([]string{lookPath(t, "sh"), "-c", `cat > "$0"`, out}, 10, "/home/u", req); err != nil {
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
	if err := runApprovalCommand(nil, 10, "", req); err == nil {
		t.Error("an empty approval_command approved")
	}
	if err := runApprovalCommand([]string{"true"}, 10, "", req); err == nil {
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
	req := EscalationRequest{Op: "write", Path: "x", From: WorkspaceWrite, To: DangerFullAccess}
	if err := runApprovalCommand([]string{lookPath(t, "sh"), "-c", `env > "$0"; pwd >> "$0"`, out}, 10, "/home/u", req); err != nil {
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
