//go:build unix

package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// escalatedPatch changes a file inside the workspace and one outside it,
// and adds one outside: only an escalation lets it through, whole.
func escalatedPatch(outside string) string {
	return "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n" +
		"*** Update File: " + filepath.Join(outside, "keep.txt") + "\n@@\n-keep\n+kept\n" +
		"*** Add File: " + filepath.Join(outside, "new.txt") + "\n+new\n*** End Patch\n"
}

// TestMcpPatchEscalate (issue 27): dsh_patch takes escalate as dsh_write
// and dsh_edit do. Under approval supervisor without an exec session the
// client's user is asked once, shown the whole patch's diff (every file,
// the one inside too); accepted, the patch runs elsewhere, all of it;
// declined, no file changes, the one inside included. Before dsh_patch
// had escalate, the argument was ignored and the patch denied.
func TestMcpPatchEscalate(t *testing.T) {
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
			if props, _ := harness.MCPTools(t, s)["dsh_patch"].InputSchema.(map[string]any)["properties"].(map[string]any); props["escalate"] == nil {
				t.Errorf("dsh_patch's input schema has no escalate: %v", props)
			}
			// A write inside first: the server's process is under
			// Landlock from then on, so the patch can only run elsewhere.
			if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(ws, "first.txt"), "content": "x"}); res.IsError {
				t.Fatal(harness.MCPText(res))
			}
			res := harness.MCPCall(t, s, "dsh_patch", map[string]any{"patch": escalatedPatch(outside), "escalate": "danger-full-access"})
			if len(asked) != 1 {
				t.Fatalf("the user was asked %d times: %q", len(asked), asked)
			}
			for _, want := range []string{"-two", "+TWO", filepath.Join(outside, "keep.txt"), "-keep", "+kept", "+new", "Allow this one call under danger-full-access mode?"} {
				if !strings.Contains(asked[0], want) {
					t.Errorf("the question lacks %q:\n%s", want, asked[0])
				}
			}
			b, _ := json.Marshal(res.StructuredContent)
			a, keep := harness.ReadFile(t, filepath.Join(ws, "a.txt")), harness.ReadFile(t, filepath.Join(outside, "keep.txt"))
			_, newErr := os.Stat(filepath.Join(outside, "new.txt"))
			if tc.grant {
				if res.IsError || !strings.Contains(string(b), `"escalated":true`) || a != "one\nTWO\nthree\nfour\nfive\n" || keep != "kept\n" || newErr != nil {
					t.Errorf("granted: %s %s; a.txt %q, keep.txt %q, new.txt %v", b, harness.MCPText(res), a, keep, newErr)
				}
				return
			}
			if !res.IsError || !strings.Contains(harness.MCPText(res), "not approved by the MCP client's user") ||
				a != "one\ntwo\nthree\nfour\nfive\n" || keep != "keep\n" || !os.IsNotExist(newErr) {
				t.Errorf("declined: %s; a.txt %q, keep.txt %q, new.txt %v", harness.MCPText(res), a, keep, newErr)
			}
		})
	}
}

// TestMcpPatchEscalatePinned (issue 27): the approval is for the one
// patch the user was shown, against the files as they were. A second
// round with another patch, or after a file it changes was changed,
// makes nothing, the files inside the workspace included.
func TestMcpPatchEscalatePinned(t *testing.T) {
	accept := map[string]any{"action": "accept", "content": map[string]any{"approve": true}}
	ws, outside := harness.MCPLayout(t)
	r := rawMcpStartModern(t, ws, map[string]any{"elicitation": map[string]any{}}, "--tmp=false", ws)
	r.onRequest = func(method string, _ json.RawMessage) any {
		t.Errorf("the server asked %s outside a round trip", method)
		return map[string]any{}
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(ws, "first.txt"), "content": "x"}); isErr {
		t.Fatal(text)
	}
	args := map[string]any{"patch": escalatedPatch(outside), "escalate": "danger-full-access"}
	first := r.call("tools/call", map[string]any{"name": "dsh_patch", "arguments": args})
	state, _ := first["requestState"].(string)
	if first["inputRequests"] == nil || state == "" {
		t.Fatalf("the first round asked nothing: %v", first)
	}
	retry := func(args map[string]any) (string, bool) {
		res := r.call("tools/call", map[string]any{"name": "dsh_patch", "arguments": args,
			"inputResponses": map[string]any{"dsh-fs-approve": accept}, "requestState": state})
		b, _ := json.Marshal(res)
		isErr, _ := res["isError"].(bool)
		return string(b), isErr
	}
	unchanged := func(when, keepWant string) {
		t.Helper()
		if a := harness.ReadFile(t, filepath.Join(ws, "a.txt")); a != "one\ntwo\nthree\nfour\nfive\n" {
			t.Errorf("%s: a.txt = %q", when, a)
		}
		if keep := harness.ReadFile(t, filepath.Join(outside, "keep.txt")); keep != keepWant {
			t.Errorf("%s: keep.txt = %q, want %q", when, keep, keepWant)
		}
		if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
			t.Errorf("%s: new.txt made (%v)", when, err)
		}
	}
	// Another patch with the approval of the first: one more file
	// outside, which the user never saw.
	other := map[string]any{"patch": strings.Replace(escalatedPatch(outside), "*** End Patch\n",
		"*** Add File: "+filepath.Join(outside, "unseen.txt")+"\n+unseen\n*** End Patch\n", 1), "escalate": "danger-full-access"}
	if out, isErr := retry(other); !isErr || !strings.Contains(out, "is not this call") {
		t.Errorf("another patch with the approval: %s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "unseen.txt")); !os.IsNotExist(err) {
		t.Errorf("unseen.txt made (%v)", err)
	}
	unchanged("after another patch", "keep\n")
	// A file the patch changes is changed between the question and the
	// answer: still the content the hunk expects, but not what the user
	// was shown, so the patch no longer applies as approved.
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, isErr := retry(args); !isErr || !strings.Contains(out, "FS_STALE") {
		t.Errorf("a file changed after the question: %s", out)
	}
	unchanged("after a changed file", "keep\nmore\n")
}

// TestMcpPatchEscalateInsideExec (issue 27): a dsh-fs mcp inside a
// dsh-fs exec session sends an escalated dsh_patch to the session's
// supervisor, whose approver (an approval_command here) is shown the
// whole patch and decides; the patch lands outside the session's kernel
// layer, which the server could not lift itself.
func TestMcpPatchEscalateInsideExec(t *testing.T) {
	ws, outside, record, s := mcpInsideExec(t)
	res := harness.MCPCall(t, s, "dsh_patch", map[string]any{"patch": escalatedPatch(outside), "escalate": "danger-full-access"})
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), `"escalated":true`) {
		t.Fatalf("escalated through the session: %s %s", b, harness.MCPText(res))
	}
	if a, keep, added := harness.ReadFile(t, filepath.Join(ws, "a.txt")), harness.ReadFile(t, filepath.Join(outside, "keep.txt")), harness.ReadFile(t, filepath.Join(outside, "new.txt")); a != "one\nTWO\nthree\nfour\nfive\n" || keep != "kept\n" || added != "new\n" {
		t.Errorf("after the patch: a.txt %q, keep.txt %q, new.txt %q", a, keep, added)
	}
	asked := harness.ReadFile(t, record)
	for _, want := range []string{"+TWO", "+kept", "+new"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the session's approver was not shown %q: %s", want, asked)
		}
	}
}
