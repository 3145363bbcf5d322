//go:build unix

package mcp

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMcpEscalateReason: dsh_write's reason, beside escalate, reaches the
// approval_command of the dsh-fs exec session the server runs in as the
// model's reason, with the session and the calling command line (the
// server's) that the session's supervisor read. Before, dsh_write took
// no reason and the request carried none of them.
func TestMcpEscalateReason(t *testing.T) {
	_, outside, record, s := mcpInsideExec(t)
	res := harness.MCPCall(t, s, "dsh_write", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "hi\n",
		"escalate": "danger-full-access", "reason": "the notes live beside the project"})
	if res.IsError {
		t.Fatalf("escalated through the session: %s", harness.MCPText(res))
	}
	var req struct {
		Session     string   `json:"session"`
		Caller      []string `json:"caller"`
		ModelReason string   `json:"model_reason"`
	}
	recorded := harness.ReadFile(t, record)
	if err := json.Unmarshal([]byte(recorded), &req); err != nil {
		t.Fatalf("request %q: %v", recorded, err)
	}
	harness.Validate(t, harness.Schemas(t)["approval-request.json"], "approval-request.json", recorded)
	if req.ModelReason != "the notes live beside the project" || req.Session == "" || len(req.Caller) < 2 || req.Caller[1] != "mcp" {
		t.Errorf("request %s: want the model's reason, the session and the server's command line", recorded)
	}
	// A reason without escalate asks nothing: it is refused.
	res = harness.MCPCall(t, s, "dsh_write", map[string]any{"path": "in.txt", "content": "x", "reason": "why"})
	if !res.IsError {
		t.Errorf("a reason without escalate was taken: %s", harness.MCPText(res))
	}
}
