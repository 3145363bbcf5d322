package mcp

import (
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMcpMoveFolderIntoItself (issue 27): move_file of a folder to a
// place beneath it is the caller's bad input, which dsh-fs finds before
// the rename: FS_INVALID_ARGUMENT saying so, and nothing moves. Left to
// the kernel it was rename(2)'s EINVAL, which is now an I/O failure.
func TestMcpMoveFolderIntoItself(t *testing.T) {
	home := harness.CanonicalTemp(t)
	harness.WriteTree(t, home, map[string]string{"src/main.go": "package main\n"})
	s, _ := mcpStartHome(t, home, "")

	mcpMustFail(t, s, "move_file", map[string]any{"source": "src", "destination": "src/inner"},
		"FS_INVALID_ARGUMENT", "a folder cannot be moved into itself")
	if got := harness.ReadFile(t, filepath.Join(home, "src", "main.go")); got != "package main\n" {
		t.Errorf("src/main.go after the refused move: %q", got)
	}
	if names := harness.DirNames(t, filepath.Join(home, "src")); len(names) != 1 {
		t.Errorf("src after the refused move holds %v, want main.go alone", names)
	}
}
