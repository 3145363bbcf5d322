package netproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewGrant: a compiled program is granted by its file's identity; a
// script (its processes are its interpreter's) and a folder are
// refused.
func TestNewGrant(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "npm")
	os.WriteFile(script, []byte("#!/usr/bin/env node\n"), 0o755)
	if _, err := NewGrant(script, []string{"registry.npmjs.org"}); err == nil || !strings.Contains(err.Error(), "is a script") {
		t.Errorf("a script: %v, want refused as a script", err)
	}
	if _, err := NewGrant(dir, []string{"example.com"}); err == nil {
		t.Error("a folder was granted")
	}
	self, _ := os.Executable()
	g, err := NewGrant(self, []string{"example.com"})
	if err != nil || g.ID.Ino == 0 || !g.Allow.AllowsName("example.com", 443) {
		t.Errorf("a program: %+v %v", g, err)
	}
	if _, err := NewGrant(self, []string{"exa mple.com"}); err == nil {
		t.Error("a bad host was granted")
	}
}
