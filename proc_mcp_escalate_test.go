package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
			ws, outside := mcpLayout(t)
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
	approver, err := lookPathIn("fake-approver", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := mcpLayout(t)
	record := filepath.Join(filepath.Dir(ws), "req.json")
	var env []string
	for _, kv := range procEnv(t, ws) {
		if !strings.HasPrefix(kv, "DSH_FS_CWD=") {
			env = append(env, kv)
		}
	}
	writeSystemConfig(t, env, fmt.Sprintf("approval: command\napproval_command: [%q, %q, \"0\"]\n", approver, record))
	c := exec.Command(procBin(t), "exec", "--cwd", ws, "--tmp=false", "--", "dsh-fs", "mcp", ws)
	c.Env, c.Dir, c.Stderr = env, ws, os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-fs-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
	if err != nil {
		t.Fatalf("connect to dsh-fs mcp under exec: %v", err)
	}
	defer s.Close()
	res := mcpCall(t, s, "dsh_write", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "hi\n", "escalate": "danger-full-access"})
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), `"escalated":true`) {
		t.Fatalf("escalated through the session: %s %s", b, mcpText(res))
	}
	if got := readFile(t, filepath.Join(outside, "x.txt")); got != "hi\n" {
		t.Errorf("outside/x.txt = %q", got)
	}
	if _, err := os.Stat(record); err != nil {
		t.Errorf("the session's approver was not asked: %v", err)
	}
	// Its policy is the session's record: a write outside without the
	// escalation is denied by the fence, and would be by the kernel.
	res = mcpCall(t, s, "dsh_policy", map[string]any{})
	b, _ = json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"origin":"pinned"`) || !strings.Contains(string(b), `"writes_fenced":true`) {
		t.Errorf("policy inside the session: %s", b)
	}
}
