package mcp

// dsh-fs mcp (issue 15) run as a real subprocess over stdio, driven by the
// official Go SDK's own client: the tools it lists, each tool's success
// and failure, and the fence holding for a long-lived process.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var mcpMutating = []string{"write_file", "edit_file", "create_directory", "move_file", "dsh_write", "dsh_edit", "dsh_patch"}

// TestMcpListTools: every tool is listed with the official server's
// annotations; read-only mode registers no tool that mutates.
func TestMcpListTools(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	all := []string{"read_text_file", "read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file", "create_directory", "move_file",
		"list_directory", "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info",
		"list_allowed_directories", "dsh_read", "dsh_write", "dsh_edit", "dsh_patch", "dsh_ls", "dsh_stat", "dsh_policy"}
	s := harness.MCPStart(t, ws, ws)
	tools := harness.MCPTools(t, s)
	// The instructions are the sandbox:policy block, for a server.
	instr := s.InitializeResult().Instructions
	for _, want := range []string{"<sandbox:policy>\nmode: workspace-write\n", "writable roots: " + ws + "\n", "reads: only within the allowed folders (" + ws + ") and the writable roots\n", "[sandbox: file access denied under workspace-write mode]", "but the escalate argument of write_file, edit_file, dsh_write, dsh_edit and dsh_patch"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions %q lack %q", instr, want)
		}
	}
	for _, name := range all {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("tool %s not listed", name)
			continue
		}
		ro := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
		if ro == slices.Contains(mcpMutating, name) {
			t.Errorf("%s: readOnlyHint %v", name, ro)
		}
	}
	if len(tools) != len(all) {
		t.Errorf("%d tools listed, want %d", len(tools), len(all))
	}
	if a := tools["write_file"].Annotations; !a.IdempotentHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("write_file annotations %+v", a)
	}
	if a := tools["create_directory"].Annotations; !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("create_directory annotations %+v", a)
	}

	t.Run("read-only", func(t *testing.T) {
		s := harness.MCPStart(t, ws, "--mode", "read-only", ws)
		tools := harness.MCPTools(t, s)
		for _, name := range mcpMutating {
			if _, ok := tools[name]; ok {
				t.Errorf("read-only mode lists %s", name)
			}
		}
		if len(tools) != len(all)-len(mcpMutating) {
			t.Errorf("%d tools listed, want %d", len(tools), len(all)-len(mcpMutating))
		}
		ctx, cancel := context.WithTimeout(context.Background(), harness.Timeout)
		defer cancel()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "x"}})
		if err == nil && !res.IsError {
			t.Errorf("write_file in read-only mode: %s", harness.MCPText(res))
		}
		if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\nthree\nfour\nfive\n" {
			t.Errorf("a.txt = %q", got)
		}
	})
}

// TestMcpDropIn calls each drop-in tool with the official server's
// arguments, for success and for failure, and checks the text and the
// disk.
func TestMcpDropIn(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	marker := "[sandbox: file access denied under workspace-write mode]"
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    []string // substrings of the text
		exact   string   // the whole text, when set
		check   func(t *testing.T)
	}{
		{name: "read whole", tool: "read_text_file", args: map[string]any{"path": "a.txt"}, exact: "one\ntwo\nthree\nfour\nfive\n"},
		{name: "read head", tool: "read_text_file", args: map[string]any{"path": "a.txt", "head": 2}, exact: "one\ntwo\n"},
		{name: "read tail", tool: "read_text_file", args: map[string]any{"path": "a.txt", "tail": 2}, exact: "four\nfive\n"},
		{name: "read head and tail", tool: "read_text_file", args: map[string]any{"path": "a.txt", "head": 1, "tail": 1}, isError: true, want: []string{"Cannot specify both head and tail", "FS_INVALID_ARGUMENT"}},
		{name: "read missing", tool: "read_text_file", args: map[string]any{"path": "nope.txt"}, isError: true, want: []string{"FS_NOT_FOUND"}},
		{name: "read_file alias", tool: "read_file", args: map[string]any{"path": filepath.Join(ws, "src/main.go")}, exact: "package main\n"},
		{name: "read multiple, one missing", tool: "read_multiple_files", args: map[string]any{"paths": []string{"a.txt", "nope.txt", "src/main.go"}},
			want: []string{"a.txt:\none\n", "\n---\nnope.txt: Error - ", "FS_NOT_FOUND", "\n---\nsrc/main.go:\npackage main\n"}},
		// Refused by the schema (minItems 1, as the official one declares).
		{name: "read multiple, none", tool: "read_multiple_files", args: map[string]any{"paths": []string{}}, isError: true, want: []string{"minItems: array length 0 is less than 1"}},
		{name: "write", tool: "write_file", args: map[string]any{"path": "new.txt", "content": "hello\n"}, exact: "Successfully wrote to new.txt",
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "new.txt")); got != "hello\n" {
					t.Errorf("new.txt = %q", got)
				}
			}},
		{name: "write replaces", tool: "write_file", args: map[string]any{"path": "new.txt", "content": "again\n"}, exact: "Successfully wrote to new.txt"},
		{name: "write outside", tool: "write_file", args: map[string]any{"path": filepath.Join(outside, "pwned.txt"), "content": "x"}, isError: true,
			want: []string{marker, "FS_SANDBOX_DENIED", "outside writable roots"},
			check: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(outside, "pwned.txt")); err == nil {
					t.Error("outside/pwned.txt was written")
				}
			}},
		{name: "write through ..", tool: "write_file", args: map[string]any{"path": "../outside/keep.txt", "content": "x"}, isError: true, want: []string{marker},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(outside, "keep.txt")); got != "keep\n" {
					t.Errorf("outside/keep.txt = %q", got)
				}
			}},
		{name: "write protected .git", tool: "write_file", args: map[string]any{"path": ".git/config", "content": "x"}, isError: true, want: []string{marker, "protected"}},
		{name: "edit", tool: "edit_file", args: map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "two", "newText": "TWO"}, {"oldText": "four\n", "newText": ""}}},
			want: []string{"```diff\n", "-two\n+TWO\n", "-four\n", "```\n\n"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\nthree\nfive\n" {
					t.Errorf("a.txt = %q", got)
				}
			}},
		{name: "edit dry run", tool: "edit_file", args: map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "ONE"}}, "dryRun": true},
			want: []string{"-one\n+ONE\n"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\nthree\nfive\n" {
					t.Errorf("a dry run changed a.txt: %q", got)
				}
			}},
		{name: "edit ambiguous refused", tool: "edit_file", args: map[string]any{"path": "dup.txt", "edits": []map[string]string{{"oldText": "x = 1", "newText": "x = 2"}}},
			isError: true, want: []string{"FS_EDIT_AMBIGUOUS", "lines 1, 2"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "dup.txt")); got != "x = 1\nx = 1\n" {
					t.Errorf("dup.txt = %q", got)
				}
			}},
		{name: "edit all or none", tool: "edit_file", args: map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "ONE"}, {"oldText": "absent", "newText": "x"}}},
			isError: true, want: []string{"FS_EDIT_NO_MATCH"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\nthree\nfive\n" {
					t.Errorf("a failed edit changed a.txt: %q", got)
				}
			}},
		{name: "edit keeps CRLF and BOM", tool: "edit_file", args: map[string]any{"path": "crlf.txt", "edits": []map[string]string{{"oldText": "alpha\nbeta", "newText": "alpha\ngamma"}}},
			want: []string{"+gamma"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "crlf.txt")); got != "\ufeffalpha\r\ngamma\r\n" {
					t.Errorf("crlf.txt = %q", got)
				}
			}},
		{name: "edit outside", tool: "edit_file", args: map[string]any{"path": filepath.Join(outside, "keep.txt"), "edits": []map[string]string{{"oldText": "keep", "newText": "x"}}},
			isError: true, want: []string{marker}},
		{name: "mkdir", tool: "create_directory", args: map[string]any{"path": "d/e/f"}, exact: "Successfully created directory d/e/f",
			check: func(t *testing.T) {
				if fi, err := os.Stat(filepath.Join(ws, "d/e/f")); err != nil || !fi.IsDir() {
					t.Errorf("d/e/f: %v", err)
				}
			}},
		{name: "mkdir again", tool: "create_directory", args: map[string]any{"path": "d/e/f"}, exact: "Successfully created directory d/e/f"},
		{name: "mkdir the allowed folder", tool: "create_directory", args: map[string]any{"path": ws}, exact: "Successfully created directory " + ws},
		{name: "mkdir over a file", tool: "create_directory", args: map[string]any{"path": "a.txt"}, isError: true, want: []string{"FS_EXISTS"}},
		{name: "mkdir outside", tool: "create_directory", args: map[string]any{"path": filepath.Join(outside, "d")}, isError: true, want: []string{marker},
			check: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(outside, "d")); err == nil {
					t.Error("outside/d was made")
				}
			}},
		{name: "move", tool: "move_file", args: map[string]any{"source": "d/e", "destination": "moved"}, exact: "Successfully moved d/e to moved",
			check: func(t *testing.T) {
				if fi, err := os.Stat(filepath.Join(ws, "moved/f")); err != nil || !fi.IsDir() {
					t.Errorf("moved/f: %v", err)
				}
			}},
		{name: "move never replaces", tool: "move_file", args: map[string]any{"source": "dup.txt", "destination": "a.txt"}, isError: true, want: []string{"FS_EXISTS"},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(ws, "dup.txt")); got != "x = 1\nx = 1\n" {
					t.Errorf("dup.txt = %q", got)
				}
			}},
		{name: "move missing", tool: "move_file", args: map[string]any{"source": "nope", "destination": "nope2"}, isError: true, want: []string{"FS_NOT_FOUND"}},
		{name: "move out", tool: "move_file", args: map[string]any{"source": "dup.txt", "destination": filepath.Join(outside, "dup.txt")}, isError: true, want: []string{marker},
			check: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(outside, "dup.txt")); err == nil {
					t.Error("dup.txt was moved outside")
				}
			}},
		{name: "move in from outside", tool: "move_file", args: map[string]any{"source": filepath.Join(outside, "keep.txt"), "destination": "stolen.txt"}, isError: true, want: []string{marker},
			check: func(t *testing.T) {
				if got := harness.ReadFile(t, filepath.Join(outside, "keep.txt")); got != "keep\n" {
					t.Errorf("outside/keep.txt = %q", got)
				}
			}},
		{name: "move into .git", tool: "move_file", args: map[string]any{"source": "dup.txt", "destination": ".git/hooks/pre-commit"}, isError: true, want: []string{marker, "protected"}},
		{name: "list", tool: "list_directory", args: map[string]any{"path": "src"}, exact: "[FILE] main.go\n[DIR] util"},
		{name: "list missing", tool: "list_directory", args: map[string]any{"path": "nope"}, isError: true, want: []string{"FS_NOT_FOUND"}},
		{name: "list with sizes", tool: "list_directory_with_sizes", args: map[string]any{"path": "src", "sortBy": "size"},
			// A folder's size is its own (tens of bytes on tmpfs, 4096 on ext4), as the official server's
			// fs.stat gives it: it sorts first.
			exact: fmt.Sprintf("[DIR] %-30s \n[FILE] %-30s %10s\n\nTotal: 1 files, 1 directories\nCombined size: 13 B", "util", "main.go", "13 B")},
		{name: "list with sizes by name", tool: "list_directory_with_sizes", args: map[string]any{"path": "src"},
			exact: fmt.Sprintf("[FILE] %-30s %10s\n[DIR] %-30s \n\nTotal: 1 files, 1 directories\nCombined size: 13 B", "main.go", "13 B", "util")},
		{name: "list with sizes, bad sort", tool: "list_directory_with_sizes", args: map[string]any{"path": "src", "sortBy": "date"}, isError: true},
		{name: "tree", tool: "directory_tree", args: map[string]any{"path": "src"},
			exact: "[\n  {\n    \"name\": \"main.go\",\n    \"type\": \"file\"\n  },\n  {\n    \"name\": \"util\",\n    \"type\": \"directory\",\n    \"children\": [\n      {\n        \"name\": \"u.go\",\n        \"type\": \"file\"\n      }\n    ]\n  }\n]"},
		{name: "tree excludes", tool: "directory_tree", args: map[string]any{"path": ".", "excludePatterns": []string{"node_modules", "*.txt", "*.png", "d", "src"}},
			// An empty folder has "children": [], as the official server's.
			exact: "[\n  {\n    \"name\": \".hidden\",\n    \"type\": \"file\"\n  },\n  {\n    \"name\": \"moved\",\n    \"type\": \"directory\",\n    \"children\": [\n      {\n        \"name\": \"f\",\n        \"type\": \"directory\",\n        \"children\": []\n      }\n    ]\n  }\n]"},
		{name: "search", tool: "search_files", args: map[string]any{"path": ".", "pattern": "**/*.go"},
			exact: filepath.Join(ws, "src/main.go") + "\n" + filepath.Join(ws, "src/util/u.go")},
		{name: "search excludes", tool: "search_files", args: map[string]any{"path": ".", "pattern": "**/*.go", "excludePatterns": []string{"src/util"}},
			exact: filepath.Join(ws, "src/main.go")},
		{name: "search, nothing", tool: "search_files", args: map[string]any{"path": ".", "pattern": "*.rs"}, exact: "No matches found"},
		{name: "info", tool: "get_file_info", args: map[string]any{"path": "src/main.go"},
			want: []string{"size: 13\n", "modified: ", "isDirectory: false\n", "isFile: true\n", "permissions: 644\n", "writable: true"}},
		{name: "info outside", tool: "get_file_info", args: map[string]any{"path": filepath.Join(outside, "keep.txt")}, isError: true,
			want: []string{marker, "FS_SANDBOX_DENIED", "outside the allowed folders"}},
		{name: "info missing", tool: "get_file_info", args: map[string]any{"path": "nope"}, isError: true, want: []string{"FS_NOT_FOUND"}},
		{name: "allowed", tool: "list_allowed_directories", args: map[string]any{}, exact: "Allowed directories:\n" + ws},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := harness.MCPCall(t, s, tc.tool, tc.args)
			got := harness.MCPText(res)
			if res.IsError != tc.isError {
				t.Errorf("isError %v, want %v: %s", res.IsError, tc.isError, got)
			}
			if tc.exact != "" && got != tc.exact {
				t.Errorf("text\n%q\nwant\n%q", got, tc.exact)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %q lacks %q", got, w)
				}
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

// TestMcpReadMedia: an image comes back as image content with its MIME
// type and its bytes.
func TestMcpReadMedia(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	res := harness.MCPCall(t, s, "read_media_file", map[string]any{"path": "img.png"})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("read_media_file: %+v", res)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG\r\n\x1a\n" {
		t.Errorf("content %#v", res.Content[0])
	}
	res = harness.MCPCall(t, s, "read_media_file", map[string]any{"path": "nope.png"})
	if !res.IsError || !strings.Contains(harness.MCPText(res), "FS_NOT_FOUND") {
		t.Errorf("missing file: %s", harness.MCPText(res))
	}
}

// TestMcpDenyRead: a trusted deny_read glob holds for every tool that
// reads, lists or searches; the file is never shown.
func TestMcpDenyRead(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	harness.WriteTree(t, ws, map[string]string{".env": "SECRET=hunter2\n"})
	s := harness.MCPStartSystem(t, ws, "deny_read: [\"**/.env\"]\n", ws)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": ".env"}},
		{"read_media_file", map[string]any{"path": ".env"}},
		{"get_file_info", map[string]any{"path": ".env"}},
		{"write_file", map[string]any{"path": ".env", "content": "x"}},
		{"edit_file", map[string]any{"path": ".env", "edits": []map[string]string{{"oldText": "hunter2", "newText": "x"}}}},
		{"dsh_read", map[string]any{"path": ".env"}},
	} {
		res := harness.MCPCall(t, s, c.tool, c.args)
		if got := harness.MCPText(res); !res.IsError || !strings.Contains(got, "[sandbox: file access denied under workspace-write mode]") || !strings.Contains(got, "deny_read") || strings.Contains(got, "hunter2") {
			t.Errorf("%s: isError %v: %s", c.tool, res.IsError, got)
		}
	}
	res := harness.MCPCall(t, s, "read_multiple_files", map[string]any{"paths": []string{".env", "a.txt"}})
	if got := harness.MCPText(res); strings.Contains(got, "hunter2") || !strings.Contains(got, ".env: Error - ") || !strings.Contains(got, "a.txt:\none\n") {
		t.Errorf("read_multiple_files: %s", got)
	}
	for _, tool := range []string{"list_directory", "directory_tree"} {
		if got := harness.MCPText(harness.MCPCall(t, s, tool, map[string]any{"path": "."})); strings.Contains(got, ".env") {
			t.Errorf("%s shows .env: %s", tool, got)
		}
	}
	if got := harness.MCPText(harness.MCPCall(t, s, "search_files", map[string]any{"path": ".", "pattern": "**/.env"})); got != "No matches found" {
		t.Errorf("search_files: %s", got)
	}
	if got := harness.ReadFile(t, filepath.Join(ws, ".env")); got != "SECRET=hunter2\n" {
		t.Errorf(".env = %q", got)
	}
}

// TestMcpManyWrites: one server process makes many mutations, each with
// a fence of its own; the kernel layer is applied once, not stacked per
// call (Landlock allows 16 layers), and still holds outside.
func TestMcpManyWrites(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	for i := range 40 {
		if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": "n.txt", "content": strings.Repeat("x", i)}); res.IsError {
			t.Fatalf("write %d: %s", i, harness.MCPText(res))
		}
	}
	if res := harness.MCPCall(t, s, "create_directory", map[string]any{"path": filepath.Join(outside, "late")}); !res.IsError {
		t.Fatal("a late mkdir outside passed")
	}
	if _, err := os.Lstat(filepath.Join(outside, "late")); err == nil {
		t.Fatal("outside/late exists")
	}
}

// TestMcpDshTools: the dsh tools return the CLI's JSON results as
// structured content, failures included.
func TestMcpDshTools(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	structured := func(t *testing.T, res *mcp.CallToolResult) map[string]any {
		t.Helper()
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
		return m
	}

	res := harness.MCPCall(t, s, "dsh_read", map[string]any{"path": "a.txt", "offset": 2, "limit": 2})
	r := structured(t, res)
	if res.IsError || r["ok"] != true || r["op"] != "read" || r["content"] != "two\nthree\n" || r["sha256"] != harness.SHA256Hex([]byte("one\ntwo\nthree\nfour\nfive\n")) {
		t.Errorf("dsh_read: %v", r)
	}
	sum := r["sha256"].(string)

	res = harness.MCPCall(t, s, "dsh_write", map[string]any{"path": "a.txt", "content": "new\n"})
	if r := structured(t, res); !res.IsError || r["ok"] != false || r["error"].(map[string]any)["code"] != "FS_EXISTS" {
		t.Errorf("dsh_write over an existing file unseen: %v", r)
	}
	res = harness.MCPCall(t, s, "dsh_write", map[string]any{"path": "a.txt", "content": "new\n", "if_match": sum})
	if r := structured(t, res); res.IsError || r["ok"] != true || r["created"] != false {
		t.Errorf("dsh_write if_match: %v", r)
	}

	res = harness.MCPCall(t, s, "dsh_write", map[string]any{"path": filepath.Join(outside, "x"), "content": "x"})
	r = structured(t, res)
	if !res.IsError || r["marker"] != "[sandbox: file access denied under workspace-write mode]" || r["error"].(map[string]any)["code"] != "FS_SANDBOX_DENIED" {
		t.Errorf("dsh_write outside: %v", r)
	}
	if !strings.Contains(harness.MCPText(res), "[sandbox: file access denied under workspace-write mode]") {
		t.Errorf("dsh_write outside text: %s", harness.MCPText(res))
	}

	res = harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"old": "x = 1", "new": "x = 2", "replace_all": true}}})
	if r := structured(t, res); res.IsError || r["replacements"] != float64(2) {
		t.Errorf("dsh_edit replace_all: %v", r)
	}
	res = harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{}})
	if r := structured(t, res); !res.IsError || r["error"].(map[string]any)["code"] != "FS_INVALID_ARGUMENT" {
		t.Errorf("dsh_edit without edits: %v", r)
	}

	res = harness.MCPCall(t, s, "dsh_ls", map[string]any{"path": "src", "recursive": true})
	if r := structured(t, res); res.IsError || r["total"] != float64(3) {
		t.Errorf("dsh_ls: %v", r)
	}
	res = harness.MCPCall(t, s, "dsh_stat", map[string]any{"path": "a.txt"})
	if r := structured(t, res); res.IsError || r["exists"] != true || r["writable"] != true {
		t.Errorf("dsh_stat: %v", r)
	}
	res = harness.MCPCall(t, s, "dsh_stat", map[string]any{"path": filepath.Join(outside, "keep.txt")})
	if r := structured(t, res); !res.IsError || r["error"].(map[string]any)["reason"] != "outside the allowed folders" {
		t.Errorf("dsh_stat outside: %v", r)
	}

	res = harness.MCPCall(t, s, "dsh_policy", map[string]any{})
	r = structured(t, res)
	if res.IsError || r["mode"] != "workspace-write" {
		t.Fatalf("dsh_policy: %v", r)
	}
	if within, _ := r["read_within"].([]any); len(within) != 1 || within[0] != ws {
		t.Errorf("dsh_policy read_within = %v, want [%s]", r["read_within"], ws)
	}
	var cwdOrigin any
	for _, v := range r["settings"].([]any) {
		if v := v.(map[string]any); v["key"] == "cwd" {
			cwdOrigin = v
		}
	}
	if o, _ := cwdOrigin.(map[string]any); o["origin"] != "command-line" || o["trust"] != "trusted" || o["value"] != ws {
		t.Errorf("cwd setting %v", cwdOrigin)
	}
}

// TestMcpColdStart: the time from starting dsh-fs mcp to the answer of
// its first call, logged (go test -v -run TestMcpColdStart).
func TestMcpColdStart(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	start := time.Now()
	s := harness.MCPStart(t, ws, ws)
	if res := harness.MCPCall(t, s, "get_file_info", map[string]any{"path": "a.txt"}); res.IsError {
		t.Fatal(harness.MCPText(res))
	}
	t.Logf("cold start to the first answer: %v", time.Since(start))
}

// TestMcpTwoDirs: DIR arguments are trusted, relative to the directory
// the harness started the server in; the first is the cwd, each is a
// writable root, and list_allowed_directories names them all.
func TestMcpTwoDirs(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ".", "../outside")
	if got, want := harness.MCPText(harness.MCPCall(t, s, "list_allowed_directories", map[string]any{})), "Allowed directories:\n"+ws+"\n"+outside; got != want {
		t.Errorf("allowed %q, want %q", got, want)
	}
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": "../outside/new.txt", "content": "ok\n"}); res.IsError {
		t.Fatalf("write in the second DIR: %s", harness.MCPText(res))
	}
	if got := harness.ReadFile(t, filepath.Join(outside, "new.txt")); got != "ok\n" {
		t.Errorf("outside/new.txt = %q", got)
	}
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": "../elsewhere.txt", "content": "x"}); !res.IsError {
		t.Errorf("a write beside both DIRs passed")
	}
}

// TestMcpInputSchemas: each drop-in tool takes the official server's
// arguments (2026.8.31, src/filesystem/index.ts): the same property
// names, the same required ones, so an existing client's calls harness.Validate.
func TestMcpInputSchemas(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	tools := harness.MCPTools(t, harness.MCPStart(t, ws, ws))
	for name, want := range map[string]struct{ props, required []string }{
		"read_text_file":            {[]string{"head", "path", "tail"}, []string{"path"}},
		"read_file":                 {[]string{"head", "path", "tail"}, []string{"path"}},
		"read_media_file":           {[]string{"path"}, []string{"path"}},
		"read_multiple_files":       {[]string{"paths"}, []string{"paths"}},
		"write_file":                {[]string{"content", "escalate", "path"}, []string{"content", "path"}},
		"edit_file":                 {[]string{"dryRun", "edits", "escalate", "path"}, []string{"edits", "path"}},
		"create_directory":          {[]string{"escalate", "path"}, []string{"path"}},
		"list_directory":            {[]string{"path"}, []string{"path"}},
		"list_directory_with_sizes": {[]string{"path", "sortBy"}, []string{"path"}},
		"directory_tree":            {[]string{"excludePatterns", "path"}, []string{"path"}},
		"move_file":                 {[]string{"destination", "escalate", "source"}, []string{"destination", "source"}},
		"search_files":              {[]string{"excludePatterns", "path", "pattern"}, []string{"path", "pattern"}},
		"get_file_info":             {[]string{"path"}, []string{"path"}},
		"list_allowed_directories":  {nil, nil},
	} {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("%s not listed", name)
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var props []string
		for p := range schema.Properties {
			props = append(props, p)
		}
		slices.Sort(props)
		slices.Sort(schema.Required)
		if schema.Type != "object" || !slices.Equal(props, want.props) || !slices.Equal(schema.Required, want.required) {
			t.Errorf("%s: type %s properties %v required %v, want %v %v", name, schema.Type, props, schema.Required, want.props, want.required)
		}
		if name == "list_directory_with_sizes" {
			if got := string(schema.Properties["sortBy"]); !strings.Contains(got, `"enum":["name","size"]`) || !strings.Contains(got, `"default":"name"`) {
				t.Errorf("sortBy schema %s", got)
			}
		}
		if name == "edit_file" {
			var edits struct {
				Items struct {
					Properties map[string]any `json:"properties"`
					Required   []string       `json:"required"`
				} `json:"items"`
			}
			json.Unmarshal(schema.Properties["edits"], &edits)
			slices.Sort(edits.Items.Required)
			if _, ok := edits.Items.Properties["oldText"]; !ok || !slices.Equal(edits.Items.Required, []string{"newText", "oldText"}) {
				t.Errorf("edit_file edits items: %s", schema.Properties["edits"])
			}
		}
	}
}

// TestMcpUsage: what the server's command line cannot say is a usage
// error at start (exit 2), before any MCP message.
func TestMcpUsage(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	for _, args := range [][]string{
		{"mcp", "--escalate", "danger-full-access", ws},
		{"mcp", "--cwd", ws, ws},
		{"mcp", "--mode", "bogus", ws},
	} {
		code, res, _, _ := harness.Run(t, harness.Cmd(harness.Bin(t), harness.Env(t, ws), ws, args...), nil)
		if code != 2 || res.Error.Code != "FS_INVALID_ARGUMENT" {
			t.Errorf("%v: exit %d, %+v", args, code, res)
		}
	}
}

// mcpEscalateCalls are the mutating tools, each asking to write outside
// the workspace with escalate: danger-full-access.
func mcpEscalateCalls(ws, outside string) []struct {
	name string
	args map[string]any
} {
	const esc = "danger-full-access"
	return []struct {
		name string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "pwned\n", "escalate": esc}},
		{"edit_file", map[string]any{"path": filepath.Join(outside, "keep.txt"), "edits": []map[string]string{{"oldText": "keep", "newText": "pwned"}}, "escalate": esc}},
		{"create_directory", map[string]any{"path": filepath.Join(outside, "d"), "escalate": esc}},
		{"move_file", map[string]any{"source": filepath.Join(ws, "a.txt"), "destination": filepath.Join(outside, "moved.txt"), "escalate": esc}},
		{"dsh_write", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "pwned\n", "escalate": esc}},
		{"dsh_edit", map[string]any{"path": filepath.Join(outside, "keep.txt"), "edits": []map[string]any{{"old": "keep", "new": "pwned", "replace_all": false}}, "escalate": esc}},
	}
}

// TestMcpEscalateRefused (issue 15): the escalate argument only asks; the
// trusted approval decides. Under the default (supervisor: no exec
// supervisor here, and this client offers no elicitation), never, tty (no
// terminal: stdio is the MCP pipe) and an approval_command that says no,
// every mutating tool is refused with reason "escalation not approved",
// the hint says not to retry, and nothing outside changes.
// create_directory and move_file have no escalated path at all.
func TestMcpEscalateRefused(t *testing.T) {
	approver, err := harness.LookPathIn("fake-approver", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, config, refusal, folderRefusal string
		asked                                bool
	}{
		{"supervisor", "", "offers no elicitation", "no dsh-fs exec supervisor", false},
		{"never", "approval: never\n", "approval is never", "approval is never", false},
		{"tty", "approval: tty\n", "standard input and output are the MCP pipe", "no escalated path", false},
		{"command", "", "approval_command exited with status 1", "no escalated path", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := harness.MCPLayout(t)
			record := filepath.Join(filepath.Dir(ws), "req.json")
			config := tc.config
			if tc.name == "command" {
				config = fmt.Sprintf("approval: command\napproval_command: [%q, %q, \"1\"]\n", approver, record)
			}
			s := harness.MCPStartSystem(t, ws, config, ws)
			for _, c := range mcpEscalateCalls(ws, outside) {
				res := harness.MCPCall(t, s, c.name, c.args)
				out := harness.MCPText(res)
				refusal := tc.refusal
				if c.name == "create_directory" || c.name == "move_file" {
					refusal = tc.folderRefusal
				}
				if !res.IsError || !strings.Contains(out, "escalation not approved") || !strings.Contains(out, refusal) ||
					!strings.Contains(out, "do not retry") || !strings.Contains(out, "[sandbox: file access denied under workspace-write mode]") {
					t.Errorf("%s: isError %t, want %q, text:\n%s", c.name, res.IsError, refusal, out)
				}
				if strings.HasPrefix(c.name, "dsh_") {
					var fl struct {
						Error struct {
							Code   string `json:"code"`
							Reason string `json:"reason"`
						} `json:"error"`
					}
					b, _ := json.Marshal(res.StructuredContent)
					if json.Unmarshal(b, &fl) != nil || fl.Error.Code != "FS_SANDBOX_DENIED" || fl.Error.Reason != "escalation not approved" {
						t.Errorf("%s: structured content %s", c.name, b)
					}
				}
			}
			if _, err := os.Stat(record); os.IsNotExist(err) == tc.asked {
				t.Errorf("approver asked: %v, want %v", !os.IsNotExist(err), tc.asked)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 || harness.ReadFile(t, filepath.Join(outside, "keep.txt")) != "keep\n" {
				t.Errorf("outside changed: %v", entries)
			}
			if harness.ReadFile(t, filepath.Join(ws, "a.txt")) != "one\ntwo\nthree\nfour\nfive\n" {
				t.Error("a.txt moved or changed")
			}
		})
	}
}

// TestMcpEscalateGranted (issue 15): an escalation the trusted approval
// grants is carried out outside the server's kernel layer (the server has
// written once already, so Landlock restricts it): the drop-in and dsh
// tools write and edit outside, the dsh tools' results say
// "escalated":true, the approver saw each change, and the next call
// without escalate is denied again.
func TestMcpEscalateGranted(t *testing.T) {
	approver, err := harness.LookPathIn("fake-approver", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, config string }{
		{"command", "approval: command\napproval_command: [%q, %q, \"0\"]\n"},
		{"trust", "approval: trust\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := harness.MCPLayout(t)
			record := filepath.Join(filepath.Dir(ws), "req.json")
			config := tc.config
			if tc.name == "command" {
				config = fmt.Sprintf(config, approver, record)
			}
			s := harness.MCPStartSystem(t, ws, config, "--tmp=false", ws)
			if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(ws, "first.txt"), "content": "first\n"}); res.IsError {
				t.Fatalf("a write inside: %s", harness.MCPText(res))
			}
			const esc = "danger-full-access"
			res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "w.txt"), "content": "written\n", "escalate": esc})
			if out := harness.MCPText(res); res.IsError || out != "Successfully wrote to "+filepath.Join(outside, "w.txt") {
				t.Errorf("write_file escalated: %s", out)
			}
			res = harness.MCPCall(t, s, "edit_file", map[string]any{"path": filepath.Join(outside, "keep.txt"),
				"edits": []map[string]string{{"oldText": "keep", "newText": "kept"}}, "escalate": esc})
			if out := harness.MCPText(res); res.IsError || !strings.Contains(out, "-keep\n+kept\n") {
				t.Errorf("edit_file escalated: %s", out)
			}
			res = harness.MCPCall(t, s, "dsh_write", map[string]any{"path": filepath.Join(outside, "d.txt"), "content": "dsh\n", "escalate": esc})
			b, _ := json.Marshal(res.StructuredContent)
			if res.IsError || !strings.Contains(string(b), `"escalated":true`) || !strings.Contains(string(b), `"mode":"danger-full-access"`) {
				t.Errorf("dsh_write escalated: %s", b)
			}
			res = harness.MCPCall(t, s, "dsh_edit", map[string]any{"path": filepath.Join(outside, "d.txt"),
				"edits": []map[string]any{{"old": "dsh", "new": "edited"}}, "escalate": esc})
			b, _ = json.Marshal(res.StructuredContent)
			if res.IsError || !strings.Contains(string(b), `"escalated":true`) || !strings.Contains(string(b), `"replacements":1`) {
				t.Errorf("dsh_edit escalated: %s %s", b, harness.MCPText(res))
			}
			for name, want := range map[string]string{"w.txt": "written\n", "keep.txt": "kept\n", "d.txt": "edited\n"} {
				if got := harness.ReadFile(t, filepath.Join(outside, name)); got != want {
					t.Errorf("outside/%s = %q, want %q", name, got, want)
				}
			}
			if tc.name == "command" {
				if req := harness.ReadFile(t, record); !strings.Contains(req, `"to":"danger-full-access"`) || !strings.Contains(req, "edited") {
					t.Errorf("the approver's last request: %s", req)
				}
			}
			res = harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "again.txt"), "content": "x"})
			if !res.IsError || !strings.Contains(harness.MCPText(res), "outside writable roots") {
				t.Errorf("a write outside without escalate: %s", harness.MCPText(res))
			}
			if _, err := os.Stat(filepath.Join(outside, "again.txt")); !os.IsNotExist(err) {
				t.Error("written outside without escalate")
			}
		})
	}
}

// TestMcpEscalateBadMode: an escalate that names no mode is an invalid
// argument, and nothing is written.
func TestMcpEscalateBadMode(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(outside, "x.txt"), "content": "x", "escalate": "root"})
	if out := harness.MCPText(res); !res.IsError || !strings.Contains(out, "FS_INVALID_ARGUMENT") {
		t.Errorf("isError %t, text:\n%s", res.IsError, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("written outside: %v", err)
	}
}
