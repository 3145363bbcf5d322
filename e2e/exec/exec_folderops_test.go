//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecEscalatedFolderOps (issue 40): inside a session, rm, move and
// mkdir outside the writable root fail as the kernel layer would make
// them fail; asked with --escalate, each goes to the supervisor as a
// typed request, which runs it outside the layer once the trusted
// approval command approves, shown every path it changes. Refused, it
// changes nothing.
func TestExecEscalatedFolderOps(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws, out, rec := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "request.json")
	for name, content := range map[string]string{"in.txt": "in\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"gone.txt", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := execEnv(t, ws, "OUT="+out)

	// Without --escalate: denied by the fence, and the shell's own rm
	// meets the kernel layer.
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), `dsh-fs rm "$OUT/gone.txt"; echo "status $?"; rm -f "$OUT/gone.txt" 2>/dev/null; echo "shell $?"`)
	if code != 0 || !strings.Contains(stdout, "status 3") || strings.Contains(stdout, "shell 0") {
		t.Fatalf("exit %d: want the fence's status 3 and the shell's rm refused\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantContent(t, filepath.Join(out, "gone.txt"), "gone.txt")

	// Approved: each call runs at the supervisor; the approver is shown
	// every path.
	harness.WriteSystemConfig(t, env, approverConfig(t, rec, 0))
	for _, tc := range []struct {
		script string
		paths  []string
	}{
		{`dsh-fs rm "$OUT/gone.txt" --escalate danger-full-access`,
			[]string{`{"op":"delete","path":"` + out + `/gone.txt","resolved":"` + out + `/gone.txt"}`}},
		{`dsh-fs move in.txt "$OUT/in.txt" --escalate danger-full-access --reason 'hand it over'`,
			[]string{`{"op":"move_from","path":"in.txt","resolved":"` + ws + `/in.txt"}`, `{"op":"move_to","path":"` + out + `/in.txt","resolved":"` + out + `/in.txt"}`}},
		{`dsh-fs mkdir -p "$OUT/made/deeper" --escalate danger-full-access`,
			[]string{`{"op":"create","path":"` + out + `/made/deeper","resolved":"` + out + `/made/deeper"}`, `{"op":"create","path":"` + out + `/made","resolved":"` + out + `/made"}`}},
	} {
		os.Remove(rec)
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), tc.script)
		if code != 0 {
			t.Fatalf("%s: exit %d, want 0\nstdout: %s\nstderr: %s", tc.script, code, stdout, stderr)
		}
		if r := lastResult(t, stdout); !r.OK || !r.Escalated {
			t.Errorf("%s: result %s: want ok and \"escalated\":true", tc.script, stdout)
		}
		req, err := os.ReadFile(rec)
		if err != nil {
			t.Fatalf("%s: the approver was not asked: %v", tc.script, err)
		}
		compact := strings.Join(strings.Fields(string(req)), "")
		for _, p := range tc.paths {
			if !strings.Contains(compact, strings.Join(strings.Fields(p), "")) {
				t.Errorf("%s: the approver's request does not name %s: %s", tc.script, p, req)
			}
		}
	}
	wantAbsent(t, filepath.Join(out, "gone.txt"))
	wantAbsent(t, filepath.Join(ws, "in.txt"))
	wantContent(t, filepath.Join(out, "in.txt"), "in\n")
	if fi, err := os.Stat(filepath.Join(out, "made", "deeper")); err != nil || !fi.IsDir() {
		t.Errorf("made/deeper: %v", err)
	}

	// Refused: nothing changes.
	harness.WriteSystemConfig(t, env, approverConfig(t, rec, 1))
	code, stdout, stderr = execSh(t, env, ws, fenced(ws), `dsh-fs rm "$OUT/keep.txt" --escalate danger-full-access`)
	if code != 3 || !strings.Contains(stdout, `"reason":"escalation not approved"`) {
		t.Errorf("refused rm: exit %d, want 3 and not approved\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantContent(t, filepath.Join(out, "keep.txt"), "keep.txt")
}
