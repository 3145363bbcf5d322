//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMcpEscalateElicitation (issue 15): under the default approval
// (supervisor) there is no dsh-fs exec supervisor, so the server asks the
// client's user through elicitation, on a protocol where a server may
// (2025-06-18 here). The question shows the path and the diff; accepted
// with approve: true, the one call is carried out outside the server's
// kernel layer; declined, nothing is written.
func TestMcpEscalateElicitation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer map[string]any
		grant  bool
	}{
		{"accepted", map[string]any{"action": "accept", "content": map[string]any{"approve": true}}, true},
		{"accepted without approve", map[string]any{"action": "accept", "content": map[string]any{"approve": false}}, false},
		{"declined", map[string]any{"action": "decline"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := harness.MCPLayout(t)
			r := rawMcpStart(t, ws, map[string]any{"elicitation": map[string]any{}}, "--tmp=false", ws)
			var asked []string
			r.onRequest = func(method string, params json.RawMessage) any {
				if method != "elicitation/create" {
					t.Errorf("the server asked %s", method)
					return map[string]any{}
				}
				var p struct {
					Message string `json:"message"`
				}
				json.Unmarshal(params, &p)
				asked = append(asked, p.Message)
				return tc.answer
			}
			// The server writes inside first: its process is
			// kernel-restricted from then on.
			if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(ws, "first.txt"), "content": "x"}); isErr {
				t.Fatal(text)
			}
			target := filepath.Join(outside, "x.txt")
			text, isErr := r.tool("dsh_write", map[string]any{"path": target, "content": "hi\n", "escalate": "danger-full-access"})
			if len(asked) != 1 || !strings.Contains(asked[0], target) || !strings.Contains(asked[0], "+hi") ||
				!strings.Contains(asked[0], "Allow this one call under danger-full-access mode?") {
				t.Errorf("the user was asked %q", asked)
			}
			_, err := os.Stat(target)
			if tc.grant {
				if isErr || !strings.Contains(text, `"escalated":true`) || err != nil {
					t.Errorf("granted: isError %v, %s; written: %v", isErr, text, err)
				}
				return
			}
			if !isErr || !strings.Contains(text, "not approved by the MCP client's user") || !os.IsNotExist(err) {
				t.Errorf("refused: isError %v, %s; stat: %v", isErr, text, err)
			}
		})
	}
}

// TestMcpEscalateInsideExec (issues 14 and 15): a dsh-fs mcp running in
// a dsh-fs exec session sends its escalated calls to the session's
// supervisor, like any call inside; the approver of the session (here an
// approval_command) decides, and the write lands outside the session's
// kernel layer, which the server could not lift itself.
func TestMcpEscalateInsideExec(t *testing.T) {
	_, outside, record, s := mcpInsideExec(t)
	res := harness.MCPCall(t, s, "dsh_write", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "hi\n", "escalate": "danger-full-access"})
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), `"escalated":true`) {
		t.Fatalf("escalated through the session: %s %s", b, harness.MCPText(res))
	}
	if got := harness.ReadFile(t, filepath.Join(outside, "x.txt")); got != "hi\n" {
		t.Errorf("outside/x.txt = %q", got)
	}
	if _, err := os.Stat(record); err != nil {
		t.Errorf("the session's approver was not asked: %v", err)
	}
	// Its policy is the session's record: a write outside without the
	// escalation is denied by the fence, and would be by the kernel.
	res = harness.MCPCall(t, s, "dsh_policy", map[string]any{})
	b, _ = json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"origin":"pinned"`) || !strings.Contains(string(b), `"writes_fenced":true`) {
		t.Errorf("policy inside the session: %s", b)
	}
}

// mcpStartElicit is harness.MCPStart with a client whose user answers every
// elicitation with answer, recording each question.
func mcpStartElicit(t *testing.T, ws string, answer *mcp.ElicitResult, asked *[]string, args ...string) *mcp.ClientSession {
	t.Helper()
	c := exec.Command(harness.Bin(t), append([]string{"mcp"}, args...)...)
	c.Env, c.Dir, c.Stderr = harness.MCPEnv(t, ws), ws, os.Stderr
	return harness.MCPConnect(t, c, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			*asked = append(*asked, req.Params.Message)
			return answer, nil
		},
	})
}

// TestMcpEscalateElicitationRoundTrip (issue 15): on protocol 2026-07-28
// the question is a multi-round-trip input request: the SDK's client puts
// it to its user and calls again; accepted, the change the user saw is
// made, once; declined, nothing is.
func TestMcpEscalateElicitationRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		grant  bool
	}{
		{"accepted", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true},
		{"declined", &mcp.ElicitResult{Action: "decline"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := harness.MCPLayout(t)
			var asked []string
			s := mcpStartElicit(t, ws, tc.answer, &asked, "--tmp=false", ws)
			if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(ws, "first.txt"), "content": "x"}); res.IsError {
				t.Fatal(harness.MCPText(res))
			}
			keep := filepath.Join(outside, "keep.txt")
			res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": keep,
				"edits": []map[string]string{{"oldText": "keep", "newText": "kept"}}, "escalate": "danger-full-access"})
			if len(asked) != 1 || !strings.Contains(asked[0], keep) || !strings.Contains(asked[0], "-keep\n  +kept") {
				t.Errorf("the user was asked %q", asked)
			}
			got := harness.ReadFile(t, keep)
			if tc.grant {
				if res.IsError || !strings.Contains(harness.MCPText(res), "+kept") || got != "kept\n" {
					t.Errorf("granted: %s; keep.txt %q", harness.MCPText(res), got)
				}
				// The approval covered that one call.
				res = harness.MCPCall(t, s, "write_file", map[string]any{"path": keep, "content": "again\n"})
				if !res.IsError || harness.ReadFile(t, keep) != "kept\n" {
					t.Errorf("a second write without escalate: %s", harness.MCPText(res))
				}
				return
			}
			if !res.IsError || !strings.Contains(harness.MCPText(res), "not approved by the MCP client's user") || got != "keep\n" {
				t.Errorf("declined: %s; keep.txt %q", harness.MCPText(res), got)
			}
		})
	}
}

// TestMcpEscalateApprovalBound (issue 15): the client's user approves one
// call, shown against one content. A second round that carries other
// content, a state the server did not sign, or a file changed since the
// question makes nothing.
func TestMcpEscalateApprovalBound(t *testing.T) {
	accept := map[string]any{"action": "accept", "content": map[string]any{"approve": true}}
	ws, outside := harness.MCPLayout(t)
	r := rawMcpStartModern(t, ws, map[string]any{"elicitation": map[string]any{}}, "--tmp=false", ws)
	r.onRequest = func(method string, _ json.RawMessage) any {
		t.Errorf("the server asked %s outside a round trip", method)
		return map[string]any{}
	}
	keep := filepath.Join(outside, "keep.txt")
	args := map[string]any{"path": keep, "content": "shown\n", "overwrite": true, "escalate": "danger-full-access"}
	first := r.call("tools/call", map[string]any{"name": "dsh_write", "arguments": args})
	state, _ := first["requestState"].(string)
	if first["inputRequests"] == nil || state == "" {
		t.Fatalf("the first round asked nothing: %v", first)
	}
	retry := func(args map[string]any, state string) (string, bool) {
		res := r.call("tools/call", map[string]any{"name": "dsh_write", "arguments": args,
			"inputResponses": map[string]any{"dsh-fs-approve": accept}, "requestState": state})
		b, _ := json.Marshal(res)
		isErr, _ := res["isError"].(bool)
		return string(b), isErr
	}
	other := map[string]any{"path": keep, "content": "not shown\n", "overwrite": true, "escalate": "danger-full-access"}
	if out, isErr := retry(other, state); !isErr || !strings.Contains(out, "is not this call") {
		t.Errorf("other content with the state: %s", out)
	}
	if out, isErr := retry(args, "e30."+strings.Repeat("0", 64)); !isErr || !strings.Contains(out, "is not this call") {
		t.Errorf("a forged state: %s", out)
	}
	if got := harness.ReadFile(t, keep); got != "keep\n" {
		t.Fatalf("keep.txt = %q after refused rounds", got)
	}
	// The file changes between the question and the answer: the change
	// the user saw no longer applies, and nothing is written.
	if err := os.WriteFile(keep, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, isErr := retry(args, state); !isErr || !strings.Contains(out, "FS_STALE") {
		t.Errorf("a changed file: %s", out)
	}
	if got := harness.ReadFile(t, keep); got != "changed\n" {
		t.Errorf("keep.txt = %q, want the change made meanwhile kept", got)
	}
}

// TestMcpEscalateNoEscalator (issue 15): a server that cannot start its
// escalator (a user that is not root, without a private runtime folder
// for the record) refuses every escalation, says why, and asks no one.
func TestMcpEscalateNoEscalator(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the server as another user")
	}
	bin, dir := harness.UnprivilegedBin(t)
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	for _, d := range []string{ws, outside} {
		os.MkdirAll(d, 0o755)
		os.Chown(d, harness.Nobody, harness.Nobody)
	}
	system := filepath.Join(dir, "etc")
	os.MkdirAll(system, 0o755)
	os.WriteFile(filepath.Join(system, "config.yaml"), []byte("approval: trust\n"), 0o644)
	c := exec.Command(bin, "mcp", "--tmp=false", ws)
	c.Dir = ws
	c.Env = []string{"PATH=/usr/bin:/bin", "DSH_FS_TEST_SYSTEM_DIR=" + system, "DSH_FS_TEST_HOME=/nonexistent", "GORACE=atexit_sleep_ms=0"}
	c.Stderr = os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: harness.Nobody, Gid: harness.Nobody}}
	s := harness.MCPConnect(t, c, nil)
	res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "x", "escalate": "danger-full-access"})
	out := harness.MCPText(res)
	if !res.IsError || !strings.Contains(out, "escalation not approved") || !strings.Contains(out, "no private folder for its record") {
		t.Errorf("isError %v:\n%s", res.IsError, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); !os.IsNotExist(err) {
		t.Error("written outside")
	}
}

// mcpInsideExec starts dsh-fs mcp on a fresh workspace inside a dsh-fs
// exec session whose approval_command (the fake approver) approves and
// writes each request it is given to record; outside lies outside every
// writable root.
func mcpInsideExec(t *testing.T) (ws, outside, record string, s *mcp.ClientSession) {
	t.Helper()
	approver, err := harness.LookPathIn("fake-approver", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	ws, outside = harness.MCPLayout(t)
	record = filepath.Join(filepath.Dir(ws), "req.json")
	env := harness.MCPEnv(t, ws)
	harness.WriteSystemConfig(t, env, fmt.Sprintf("approval: command\napproval_command: [%q, %q, \"0\"]\n", approver, record))
	c := exec.Command(harness.Bin(t), "exec", "--cwd", ws, "--tmp=false", "--", "dsh-fs", "mcp", ws)
	c.Env, c.Dir, c.Stderr = env, ws, os.Stderr
	return ws, outside, record, harness.MCPConnect(t, c, nil)
}
