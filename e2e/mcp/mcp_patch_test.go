package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMcpPatch: dsh_patch applies a multi-file patch as the CLI does, with
// the same result; one that touches a path outside the roots is denied
// and changes nothing, the files inside it names included.
func TestMcpPatch(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	structured := func(res *mcp.CallToolResult) map[string]any {
		t.Helper()
		var m map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
		return m
	}

	res := harness.MCPCall(t, s, "dsh_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: n/new.txt\n+new\n*** End Patch\n"})
	r := structured(res)
	files, _ := r["files"].([]any)
	if res.IsError || r["op"] != "patch" || len(files) != 2 {
		t.Fatalf("dsh_patch: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\nTWO\nthree\nfour\nfive\n" {
		t.Errorf("a.txt after dsh_patch: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "n/new.txt")); string(b) != "new\n" {
		t.Errorf("n/new.txt after dsh_patch: %q", b)
	}

	before, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	res = harness.MCPCall(t, s, "dsh_patch", map[string]any{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n--- /dev/null\n+++ " + filepath.Join(outside, "x.txt") + "\n@@ -0,0 +1 @@\n+pwned\n"})
	r = structured(res)
	if !res.IsError || r["marker"] != "[sandbox: file access denied under workspace-write mode]" {
		t.Errorf("dsh_patch outside: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != string(before) {
		t.Errorf("a.txt changed by a denied patch: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Errorf("the denied patch created %s", filepath.Join(outside, "x.txt"))
	}
}
