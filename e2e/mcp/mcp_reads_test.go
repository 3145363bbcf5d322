package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMcpReadsConfined (issue 15): over MCP the model has no other way to
// the files, and the official server answers only within its allowed
// folders; so does dsh-fs mcp, for reads, listings, stats and searches
// as for writes, in both modes, and through a symlink that leads out.
// Before, every read tool answered for any path the user could read.
func TestMcpReadsConfined(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	harness.WriteTree(t, outside, map[string]string{"sub/deep.txt": "deep secret\n"})
	if err := os.Symlink(filepath.Join(outside, "keep.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(outside, "keep.txt")
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			s := harness.MCPStart(t, ws, "--mode", mode, "--tmp=false", ws)
			marker := "[sandbox: file access denied under " + mode + " mode]"
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"read_text_file", map[string]any{"path": keep}},
				{"read_file", map[string]any{"path": "../outside/keep.txt"}},
				{"read_text_file", map[string]any{"path": "link.txt"}},
				{"read_text_file", map[string]any{"path": "out/sub/deep.txt"}},
				{"read_media_file", map[string]any{"path": keep}},
				{"get_file_info", map[string]any{"path": keep}},
				{"list_directory", map[string]any{"path": outside}},
				{"list_directory", map[string]any{"path": "out"}},
				{"list_directory_with_sizes", map[string]any{"path": outside}},
				{"directory_tree", map[string]any{"path": outside}},
				{"search_files", map[string]any{"path": outside, "pattern": "**/*.txt"}},
				{"dsh_read", map[string]any{"path": keep}},
				{"dsh_stat", map[string]any{"path": keep}},
				{"dsh_ls", map[string]any{"path": outside}},
			} {
				res := harness.MCPCall(t, s, c.tool, c.args)
				got := harness.MCPText(res)
				if !res.IsError || !strings.Contains(got, marker) || !strings.Contains(got, "outside the allowed folders") ||
					strings.Contains(got, "keep\n") || strings.Contains(got, "deep secret") {
					t.Errorf("%s %v: isError %v:\n%s", c.tool, c.args, res.IsError, got)
				}
			}
			got := harness.MCPText(harness.MCPCall(t, s, "read_multiple_files", map[string]any{"paths": []string{keep, "a.txt"}}))
			if !strings.Contains(got, keep+": Error - ") || strings.Contains(got, "keep\n") || !strings.Contains(got, "a.txt:\none\n") {
				t.Errorf("read_multiple_files:\n%s", got)
			}
			// A dry run of an edit outside shows no diff of what is there
			// (read-only mode has no edit_file).
			if mode == "workspace-write" {
				res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": keep, "dryRun": true,
					"edits": []map[string]string{{"oldText": "keep", "newText": "x"}}})
				if got := harness.MCPText(res); !res.IsError || strings.Contains(got, "-keep") {
					t.Errorf("edit_file dryRun outside: isError %v:\n%s", res.IsError, got)
				}
			}
			// Inside, everything still answers; a symlink that stays inside
			// too, and the tree shows links that lead out without following.
			if res := harness.MCPCall(t, s, "read_text_file", map[string]any{"path": "a.txt"}); res.IsError {
				t.Errorf("read inside: %s", harness.MCPText(res))
			}
			if got := harness.MCPText(harness.MCPCall(t, s, "directory_tree", map[string]any{"path": "."})); strings.Contains(got, "deep.txt") {
				t.Errorf("the tree followed a link out:\n%s", got)
			}
		})
	}
}
