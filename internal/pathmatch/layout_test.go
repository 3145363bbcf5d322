package pathmatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The layout notation of the sandbox's tests (a copy of internal/sandbox/layout_test.go's), after Go's os.Root
// tests: one string per entry, created in order under a root folder.
//
//	"d/"          a folder (parents are created as needed)
//	"d/f"         a file, content "x"
//	"a => ../x"   a symlink whose target is written as is
//	"a => $ROOT/x" a symlink with an absolute target inside the test's root
//
// "$ROOT" in a symlink target is replaced by the layout's root, the only
// way a table can name an absolute path under a temp folder it does not
// know yet.

// tempRoot returns a fresh temp folder with its symlinks resolved, so
// that canonical paths computed by the tests compare equal to it (the temp
// folder may itself sit under a symlink).
func tempRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// makeLayout creates entries (in the notation above) under root.
func makeLayout(t testing.TB, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if err := makeEntry(root, e); err != nil {
			t.Fatalf("layout entry %q: %v", e, err)
		}
	}
}

// makeEntry creates one layout entry under root.
func makeEntry(root, entry string) error {
	if name, target, ok := strings.Cut(entry, " => "); ok {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.Symlink(strings.ReplaceAll(target, "$ROOT", root), p)
	}
	p := filepath.Join(root, entry)
	if strings.HasSuffix(entry, "/") {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte("x"), 0o644)
}
