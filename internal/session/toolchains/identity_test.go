package toolchains

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolvedIdentityIsEvalIdentity: the key's identity of a file read
// through one descriptor (resolvedIdentity) is the one resolving by path
// gives (evalIdentity), whatever symlinks lead to it, so a kept answer
// stays found; a file that is not there, or a symlink that leads nowhere,
// is absent both ways.
func TestResolvedIdentityIsEvalIdentity(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real", "bin"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real", "bin", "go"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("real", filepath.Join(dir, "linked")))                                    // a folder through a symlink
	must(os.Symlink(filepath.Join(dir, "linked", "bin", "go"), filepath.Join(dir, "golink"))) // an absolute symlink through it
	must(os.Symlink("golink", filepath.Join(dir, "chain")))                                   // a chain of two
	must(os.Symlink("nowhere", filepath.Join(dir, "dangling")))
	for _, rel := range []string{"real/bin/go", "linked/bin/go", "golink", "chain", "real/bin", "linked"} {
		p := filepath.Join(dir, rel)
		real, id, err := resolvedIdentity(p)
		wantReal, wantID, wantErr := evalIdentity(p)
		if err != nil || wantErr != nil || real != wantReal || id != wantID {
			t.Errorf("%s: %q %q %v; resolving by path: %q %q %v", rel, real, id, err, wantReal, wantID, wantErr)
		}
	}
	for _, rel := range []string{"missing", "real/missing/go", "dangling"} {
		if got := fileIdentity(filepath.Join(dir, rel)); got != "absent" {
			t.Errorf("%s: %q, want absent", rel, got)
		}
	}
	// Changed behind the same path, the identity changes.
	before := fileIdentity(filepath.Join(dir, "chain"))
	must(os.Remove(filepath.Join(dir, "golink")))
	must(os.WriteFile(filepath.Join(dir, "other"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("other", filepath.Join(dir, "golink")))
	if after := fileIdentity(filepath.Join(dir, "chain")); after == before || after == "absent" {
		t.Errorf("a symlink retargeted: the identity stayed %q (was %q)", after, before)
	}
}
