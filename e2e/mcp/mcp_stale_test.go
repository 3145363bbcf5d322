package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// staleDiff is the diff text of a failed call's FS_STALE detail, and
// whether the detail has a diff at all.
func staleDiff(t *testing.T, res *mcp.CallToolResult) (string, bool) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Error struct {
			Code   string `json:"code"`
			Detail struct {
				Diff *struct {
					Text string `json:"text"`
				} `json:"diff"`
			} `json:"detail"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil || !res.IsError || r.Error.Code != "FS_STALE" {
		t.Fatalf("want FS_STALE, got %s (%v)", b, err)
	}
	if r.Error.Detail.Diff == nil {
		return "", false
	}
	return r.Error.Detail.Diff.Text, true
}

// TestMcpStaleDiff (issue 40): one dsh-fs mcp process remembers what its
// dsh_read calls returned, by sha256, so a dsh_edit, dsh_write or
// dsh_patch whose if_match went stale shows the diff from what was read
// to what is there now; a client may also give the content back
// (if_match_content). A hash the server never read gives no diff, and
// content that does not hash to if_match is refused. Before: FS_STALE's
// detail held the two hashes and no diff.
func TestMcpStaleDiff(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	const old = "one\ntwo\nthree\nfour\nfive\n"
	sum := harness.SHA256Hex([]byte(old))
	res := harness.MCPCall(t, s, "dsh_read", map[string]any{"path": "a.txt", "offset": 4, "limit": 1})
	if res.IsError {
		t.Fatalf("dsh_read: %s", harness.MCPText(res))
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\nTWO\nthree\nfour\nfive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n one\n-two\n+TWO\n three\n four\n five\n"
	edits := []map[string]any{{"old": "four", "new": "4"}}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"dsh_edit", map[string]any{"path": "a.txt", "edits": edits, "if_match": sum}},
		{"dsh_write", map[string]any{"path": "a.txt", "content": "x", "if_match": sum}},
		{"dsh_patch", map[string]any{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -5 +5 @@\n-five\n+5\n", "if_match": map[string]string{"a.txt": sum}}},
	} {
		res := harness.MCPCall(t, s, c.tool, c.args)
		if got, ok := staleDiff(t, res); !ok || got != want {
			t.Errorf("%s: diff %q, want %q", c.tool, got, want)
		}
		// The text a client without structured content reads has it too.
		if !strings.Contains(harness.MCPText(res), "-two\n+TWO") {
			t.Errorf("%s: text without the diff: %s", c.tool, harness.MCPText(res))
		}
	}

	// A hash this server never read: no diff.
	never := strings.Repeat("1", 64)
	if got, ok := staleDiff(t, harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": "a.txt", "edits": edits, "if_match": never})); ok {
		t.Errorf("a diff from content never read: %q", got)
	}

	// Content given back, for a hash the server never read.
	given := "x = 1\ny\n"
	res = harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"old": "x = 1", "new": "x = 2", "replace_all": true}},
		"if_match": harness.SHA256Hex([]byte(given)), "if_match_content": given})
	if got, ok := staleDiff(t, res); !ok || !strings.Contains(got, "-y\n+x = 1\n") {
		t.Errorf("content given back: diff %q", got)
	}
	// Content that does not hash to if_match is refused, nothing changed.
	res = harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": "a.txt", "edits": edits, "if_match": sum, "if_match_content": given})
	if !res.IsError || !strings.Contains(harness.MCPText(res), "FS_INVALID_ARGUMENT") {
		t.Errorf("content given back that is not if_match's: %s", harness.MCPText(res))
	}
	if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\nthree\nfour\nfive\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// TestMcpStaleDenyRead (issue 40): a file read, then swapped for a link
// to a deny_read file, is denied to a stale dsh_edit and dsh_write: the
// server's memory of the read never diffs the link's new target. The
// control, a server without that deny_read, shows the same calls do
// diff the target (the secret shows), so the check can fail.
func TestMcpStaleDenyRead(t *testing.T) {
	for _, deny := range []bool{true, false} {
		t.Run(map[bool]string{true: "deny_read", false: "control"}[deny], func(t *testing.T) {
			ws, _ := harness.MCPLayout(t)
			harness.WriteTree(t, ws, map[string]string{".env": "SECRET=hunter2\n"})
			system := "deny_read: [\"**/.env\"]\n"
			if !deny {
				system = "deny_read: []\n"
			}
			s := harness.MCPStartSystem(t, ws, system, ws)
			sum := harness.SHA256Hex([]byte("one\ntwo\nthree\nfour\nfive\n"))
			if res := harness.MCPCall(t, s, "dsh_read", map[string]any{"path": "a.txt"}); res.IsError {
				t.Fatalf("dsh_read: %s", harness.MCPText(res))
			}
			a := filepath.Join(ws, "a.txt")
			if err := os.Remove(a); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(".env", a); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"dsh_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old": "SECRET", "new": "x"}}, "if_match": sum}},
				{"dsh_write", map[string]any{"path": "a.txt", "content": "x", "if_match": sum}},
			} {
				res := harness.MCPCall(t, s, c.tool, c.args)
				got := harness.MCPText(res)
				b, _ := json.Marshal(res.StructuredContent)
				leaked := strings.Contains(got+string(b), "hunter2")
				switch {
				case deny && (leaked || !strings.Contains(got, "deny_read")):
					t.Errorf("%s: %s", c.tool, got)
				case !deny && (!leaked || !strings.Contains(got, "FS_STALE")):
					t.Errorf("control: %s does not diff the link's target: %s", c.tool, got)
				}
			}
			if got := harness.ReadFile(t, filepath.Join(ws, ".env")); got != "SECRET=hunter2\n" {
				t.Errorf(".env = %q", got)
			}
		})
	}
}
