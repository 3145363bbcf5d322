package mcp

// Deliberate differences from the official filesystem server that no
// other test pins: each is a row of docs/mcp.md's table of differences,
// which names the test (TestMcpDifferencesTableNamesTests keeps the
// names true).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMcpDiffSiblingPrefix: a folder whose name is the allowed folder's
// and a quote or a space more is another folder, outside: the official
// server compares names and takes it for inside.
func TestMcpDiffSiblingPrefix(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	for _, sibling := range []string{ws + `"`, ws + " "} {
		harness.WriteTree(t, sibling, map[string]string{"secret.txt": "s\n"})
		if res := harness.MCPCall(t, s, "read_text_file", map[string]any{"path": filepath.Join(sibling, "secret.txt")}); !res.IsError {
			t.Errorf("read in %q: %s", sibling, harness.MCPText(res))
		}
		if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(sibling, "x"), "content": "x"}); !res.IsError {
			t.Errorf("write in %q: %s", sibling, harness.MCPText(res))
		}
		if _, err := os.Lstat(filepath.Join(sibling, "x")); err == nil {
			t.Errorf("%q was written", sibling)
		}
	}
}

// TestMcpDiffReadCut: read_text_file of a file over read_max_bytes is cut
// there with a note naming dsh_read; the official server returns it whole.
func TestMcpDiffReadCut(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	line := strings.Repeat("x", 99) + "\n"
	harness.WriteTree(t, ws, map[string]string{"big.txt": strings.Repeat(line, 3000)}) // 300,000 bytes
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	text := harness.MCPText(harness.MCPCall(t, s, "read_text_file", map[string]any{"path": "big.txt"}))
	if len(text) > 256<<10+200 || !strings.Contains(text, "[dsh-fs: cut at read_max_bytes (262144 bytes)") || !strings.Contains(text, "dsh_read with offset") {
		t.Errorf("read of 300,000 bytes gave %d bytes, ending %q", len(text), text[max(0, len(text)-200):])
	}
}

// TestMcpDiffSearchBaseName: a search_files pattern without "/" matches
// the base name at any depth (the official server's matches the top
// level only).
func TestMcpDiffSearchBaseName(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	got := harness.MCPText(harness.MCPCall(t, s, "search_files", map[string]any{"path": ".", "pattern": "*.go"}))
	if got != filepath.Join(ws, "src/main.go")+"\n"+filepath.Join(ws, "src/util/u.go") {
		t.Errorf("search *.go = %q", got)
	}
}

// TestMcpDiffStructuredText: list_directory_with_sizes and directory_tree
// give {"content": TEXT} as structured content, as every other drop-in
// tool (the official server: {"content": [a text block]}).
func TestMcpDiffStructuredText(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	for _, tool := range []string{"list_directory_with_sizes", "directory_tree"} {
		res := harness.MCPCall(t, s, tool, map[string]any{"path": "src"})
		raw, _ := json.Marshal(res.StructuredContent)
		var sc struct {
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(raw, &sc); err != nil || sc.Content == nil || *sc.Content != harness.MCPText(res) {
			t.Errorf("%s structured content %s", tool, raw)
		}
	}
}

// TestMcpDiffMediaBound: read_media_file reads at most 16 MiB
// (FS_TOO_LARGE past it); the official server has no bound.
func TestMcpDiffMediaBound(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	if err := os.WriteFile(filepath.Join(ws, "huge.png"), make([]byte, 16<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	res := harness.MCPCall(t, s, "read_media_file", map[string]any{"path": "huge.png"})
	if text := harness.MCPText(res); !res.IsError || !strings.Contains(text, "FS_TOO_LARGE") {
		t.Errorf("read_media_file of 16 MiB + 1: %.200s", text)
	}
}

// TestMcpDiffEditContext: edit_file's diff has diff_context lines of
// context (3, --context), where the official server's has jsdiff's 4.
func TestMcpDiffEditContext(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	harness.WriteTree(t, ws, map[string]string{"ten.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"})
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": "ten.txt", "edits": []map[string]string{{"oldText": "5\n", "newText": "five\n"}}})
	if text := harness.MCPText(res); res.IsError || !strings.Contains(text, "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n") {
		t.Errorf("edit_file diff: %q", text)
	}
}

// TestMcpDiffEditNoEdits: edit_file with an empty list of edits is
// refused (FS_INVALID_ARGUMENT), as a call that can only be a mistake;
// the official server answers its empty diff.
func TestMcpDiffEditNoEdits(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": "a.txt", "edits": []any{}})
	if text := harness.MCPText(res); !res.IsError || !strings.Contains(text, "FS_INVALID_ARGUMENT") {
		t.Errorf("edit_file with no edits: %s", text)
	}
}

// TestMcpDiffTmpWritable: /tmp is a writable root unless --tmp=false, as
// dsh-fs's default; the official server keeps to its folders.
func TestMcpDiffTmpWritable(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	if !strings.HasPrefix(outside, "/tmp/") {
		t.Skipf("the test's folders are not under /tmp (%s)", outside)
	}
	var env []string
	for _, kv := range harness.MCPEnv(t, ws) {
		if !strings.HasPrefix(kv, "DSH_FS_TMP=") {
			env = append(env, kv)
		}
	}
	s, _ := startWithStderr(t, ws, env, "--tmp=true", ws)
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "t.txt"), "content": "t"}); res.IsError {
		t.Errorf("write under /tmp: %s", harness.MCPText(res))
	}
	s, _ = startWithStderr(t, ws, env, ws) // startWithStderr gives --tmp=false
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "u.txt"), "content": "u"}); !res.IsError {
		t.Errorf("write under /tmp with --tmp=false: %s", harness.MCPText(res))
	}
}
