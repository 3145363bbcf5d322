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
