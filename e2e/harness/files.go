package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadFile is the content of the file at path; an error fails the test.
func ReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// CanonicalTemp is a fresh canonical folder (t.TempDir with its
// symlinks resolved).
func CanonicalTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TempUnder is a new folder in dir, readable by all and removed when the
// test ends, canonical; the test is skipped where dir takes no folder.
// It is for a test that needs a place of its own on the disk (/home,
// which exec's read view covers) rather than the test's temp folder.
func TempUnder(t *testing.T, dir string) string {
	t.Helper()
	d, err := os.MkdirTemp(dir, "dsh-fs-test-")
	if err != nil {
		t.Skipf("cannot make a folder in %s: %v", dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
