//go:build unix

package exec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// approvedPath is one entry of an escalation request's "paths".
type approvedPath struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	Resolved string `json:"resolved"`
}

// TestExecPatchApprovalNamesEveryPath: a patch escalated from inside a
// session, through the broker to the supervisor, is put to the
// session's approval_command with every path it changes: the updated
// file outside the roots, a second file it creates there and both ends
// of a *** Move to:. Before, the request named the first denied file
// alone (its "path" and "resolved"); the rest were only inside the diff.
func TestExecPatchApprovalNamesEveryPath(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	c := newExecConfigCase(t, 0, "")
	harness.WriteTree(t, c.out, map[string]string{"x.txt": "outside\n", "old.txt": "move me\n"})
	body := "*** Begin Patch\n" +
		"*** Update File: " + filepath.Join(c.out, "x.txt") + "\n@@\n-outside\n+changed outside\n" +
		"*** Add File: " + filepath.Join(c.out, "new.txt") + "\n+planted\n" +
		"*** Update File: " + filepath.Join(c.out, "old.txt") + "\n*** Move to: " + filepath.Join(c.out, "moved.txt") + "\n@@\n-move me\n+moved\n" +
		"*** End Patch\n"
	if err := os.WriteFile(filepath.Join(c.ws, "change.patch"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := c.run(t, `dsh-fs patch --from change.patch --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var req struct {
		Paths []approvedPath `json:"paths"`
	}
	recorded := harness.ReadFile(t, c.mark)
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	want := []approvedPath{
		{"update", filepath.Join(c.out, "x.txt"), filepath.Join(c.out, "x.txt")},
		{"create", filepath.Join(c.out, "new.txt"), filepath.Join(c.out, "new.txt")},
		{"move_from", filepath.Join(c.out, "old.txt"), filepath.Join(c.out, "old.txt")},
		{"move_to", filepath.Join(c.out, "moved.txt"), filepath.Join(c.out, "moved.txt")},
	}
	if len(req.Paths) != len(want) {
		t.Fatalf("the session's approver was asked to approve %+v, want %+v\nrequest: %s", req.Paths, want, recorded)
	}
	for i := range want {
		if req.Paths[i] != want[i] {
			t.Errorf("paths[%d] = %+v, want %+v", i, req.Paths[i], want[i])
		}
	}
	wantContent(t, filepath.Join(c.out, "moved.txt"), "moved\n")
}

// TestExecEscalationSaysWhereFrom: the request an escalation inside a
// session puts to the approval_command names the session (from its
// record), the caller's working directory, the calling command line as
// the supervisor read it from the caller's process, and the model's
// --reason. Before, it carried none of them, and --reason was an unknown
// flag (exit 2).
func TestExecEscalationSaysWhereFrom(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	c := newExecConfigCase(t, 0, "")
	harness.WriteTree(t, c.ws, map[string]string{"sub/.keep": ""})
	code, stdout, stderr := c.run(t, `cd sub && dsh-fs write "$OUT/x" --content hi --escalate danger-full-access --reason 'the release notes live there'`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var req struct {
		Kind        string         `json:"kind"`
		Session     string         `json:"session"`
		Cwd         string         `json:"cwd"`
		Caller      []string       `json:"caller"`
		ModelReason string         `json:"model_reason"`
		Paths       []approvedPath `json:"paths"`
	}
	recorded := harness.ReadFile(t, c.mark)
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	harness.Validate(t, harness.Schemas(t)["approval-request.json"], "approval-request.json", recorded)
	if req.Kind != "file" || req.Session == "" || req.Cwd != filepath.Join(c.ws, "sub") || req.ModelReason != "the release notes live there" {
		t.Errorf("request %s: want kind file, a session id, cwd %s and the model's reason", recorded, filepath.Join(c.ws, "sub"))
	}
	if want := (approvedPath{"create", filepath.Join(c.out, "x"), filepath.Join(c.out, "x")}); len(req.Paths) != 1 || req.Paths[0] != want {
		t.Errorf("paths %+v, want the creation of %s alone", req.Paths, want.Resolved)
	}
	if len(req.Caller) < 3 || filepath.Base(req.Caller[0]) != "dsh-fs" || req.Caller[1] != "write" || req.Caller[len(req.Caller)-1] != "the release notes live there" {
		t.Errorf("caller %q, want the dsh-fs write command line", req.Caller)
	}
}

// TestExecPatchApprovalNamesEveryPathAgent: the same patch, escalated in
// a session of the real ordinary user (user namespace and all): its
// approver is given every path with its operation, not the first file
// alone.
func TestExecPatchApprovalNamesEveryPathAgent(t *testing.T) {
	s := newSocketSession(t, true)
	out := filepath.Join(s.home, "out")
	os.MkdirAll(out, 0o755)
	harness.WriteTree(t, out, map[string]string{"x.txt": "outside\n", "old.txt": "move me\n"})
	chownTree(t, out)
	record := filepath.Join(s.home, "asked.json")
	s.config(t, "approval: command\napproval_command: [/bin/sh, -c, \"cat > "+record+"; exit 0\"]\n")
	body := "*** Begin Patch\n" +
		"*** Update File: " + filepath.Join(out, "x.txt") + "\n@@\n-outside\n+changed outside\n" +
		"*** Add File: " + filepath.Join(out, "new.txt") + "\n+planted\n" +
		"*** Update File: " + filepath.Join(out, "old.txt") + "\n*** Move to: " + filepath.Join(out, "moved.txt") + "\n@@\n-move me\n+moved\n" +
		"*** End Patch\n"
	harness.WriteTree(t, s.ws, map[string]string{"change.patch": body})
	chownTree(t, s.ws)
	// Not /tmp: the files outside must lie outside every writable root.
	printed := s.run(t, []string{"--tmp=false"}, `dsh-fs patch --from change.patch --escalate danger-full-access; echo "patch=$?"`)
	if !strings.Contains(printed, "patch=0") {
		t.Fatalf("the escalated patch failed:\n%s", printed)
	}
	var req struct {
		Paths []approvedPath `json:"paths"`
	}
	recorded := harness.ReadFile(t, record)
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	want := []approvedPath{
		{"update", filepath.Join(out, "x.txt"), filepath.Join(out, "x.txt")},
		{"create", filepath.Join(out, "new.txt"), filepath.Join(out, "new.txt")},
		{"move_from", filepath.Join(out, "old.txt"), filepath.Join(out, "old.txt")},
		{"move_to", filepath.Join(out, "moved.txt"), filepath.Join(out, "moved.txt")},
	}
	if !slices.Equal(req.Paths, want) {
		t.Errorf("the approver was asked to approve %+v, want %+v\nrequest: %s", req.Paths, want, recorded)
	}
	wantContent(t, filepath.Join(out, "moved.txt"), "moved\n")
}

// TestExecApprovalCommandGetsNoChannel: the approval_command an
// escalation inside a session runs gets the request on its stdin and
// nothing else of the session's: not the brokered call's channel to the
// supervisor (which answers escalations), nor any other socket.
func TestExecApprovalCommandGetsNoChannel(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws, out, files := sessionTemp(t), sessionTemp(t), sessionTemp(t)
	seen := filepath.Join(files, "fds.txt")
	approver := `for f in /proc/$$/fd/*; do echo "${f##*/} $(readlink "$f")"; done > ` + seen + `; cat > /dev/null; exit 0`
	config := filepath.Join(files, "session.yaml")
	harness.WriteTree(t, files, map[string]string{"session.yaml": fmt.Sprintf("approval: command\napproval_command: [/bin/sh, -c, %q]\n", approver)})
	env := execEnv(t, ws, "OUT="+out)
	code, stdout, stderr := execSh(t, env, ws, append(fenced(ws), "--config", config), `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	listed := harness.ReadFile(t, seen)
	for _, line := range strings.Split(strings.TrimSpace(listed), "\n") {
		fd, target, _ := strings.Cut(line, " ")
		if strings.HasPrefix(target, "socket:") {
			t.Errorf("the approval_command holds descriptor %s, a socket (%s): the session's channel\nall: %s", fd, target, listed)
		}
	}
	wantContent(t, filepath.Join(out, "x"), "hi")
}
