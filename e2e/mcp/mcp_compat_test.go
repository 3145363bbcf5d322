package mcp

// The compatibility recordings of issue 15: for each tool of the official
// MCP filesystem server, a small call and the shape of the official
// server's result text, written by reading its source (each recording
// names the place). Each is run against dsh-fs mcp and its text checked
// against the shape, by regexps rather than bytes: dsh-fs may add a note
// or sort where the official server does not, but a model prompted for
// the official server must read ours.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpRecording is one file of testdata/mcp. "$WS" in the arguments and
// the shapes stands for the workspace (harness.MCPLayout's), canonical.
type mcpRecording struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	// Official says where in the official server's source the shape
	// comes from.
	Official string `json:"official"`
	// Shape are regexps the result's text must all match.
	Shape []string `json:"shape"`
	// Absent are strings the text must not contain.
	Absent []string `json:"absent,omitempty"`
	// Content, when set, is the one non-text content block expected.
	Content *struct {
		Type     string `json:"type"`
		MIMEType string `json:"mimeType"`
	} `json:"content,omitempty"`
}

// TestMcpCompatRecordings runs every recording in a fresh workspace and
// server, and checks the result's shape.
func TestMcpCompatRecordings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mcp", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	officialTools := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := harness.MCPLayout(t)
			var rec mcpRecording
			if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "$WS", ws)), &rec); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if rec.Official == "" || (len(rec.Shape) == 0 && rec.Content == nil) {
				t.Fatalf("%s: a recording names its source and a shape", file)
			}
			officialTools[rec.Tool] = true
			res := harness.MCPCall(t, harness.MCPStart(t, ws, ws), rec.Tool, rec.Arguments)
			text := harness.MCPText(res)
			if res.IsError {
				t.Fatalf("tool error:\n%s", text)
			}
			for _, shape := range rec.Shape {
				if !regexp.MustCompile(shape).MatchString(text) {
					t.Errorf("text does not match %s:\n%s", shape, text)
				}
			}
			for _, s := range rec.Absent {
				if strings.Contains(text, s) {
					t.Errorf("text has %q:\n%s", s, text)
				}
			}
			if rec.Content != nil {
				if len(res.Content) != 1 {
					t.Fatalf("%d content blocks, want 1", len(res.Content))
				}
				img, ok := res.Content[0].(*mcp.ImageContent)
				if !ok || rec.Content.Type != "image" || img.MIMEType != rec.Content.MIMEType || len(img.Data) == 0 {
					t.Errorf("content %#v, want %s %s", res.Content[0], rec.Content.Type, rec.Content.MIMEType)
				}
			}
		})
	}
	// Every tool of the official server has a recording.
	for _, tool := range []string{"read_text_file", "read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
		"create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file", "search_files",
		"get_file_info", "list_allowed_directories"} {
		if !officialTools[tool] {
			t.Errorf("no recording of %s", tool)
		}
	}
}
