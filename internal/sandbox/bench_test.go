package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// The fence's hot path, paid by every mutation and every stat: resolve a
// path against the session cwd, then decide whether it may be written.
// Benchmarks only: nothing here fails on timing.

// benchDeepRel is a file six levels deep inside the workspace.
const benchDeepRel = "src/internal/pkg/module/sub/file.go"

// benchWorkspace makes a workspace holding benchDeepRel and returns its
// canonical path.
func benchWorkspace(b *testing.B) string {
	b.Helper()
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	full := filepath.Join(ws, benchDeepRel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(full, []byte("package sub\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return ws
}

// benchPolicy is the default workspace-write policy on ws, with the
// kernel layer left off so the benchmark process is not restricted.
func benchPolicy(ws string) policy.Policy {
	return policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Tmp: false, Protected: policy.DefaultProtected, MaxMode: policy.DangerFullAccess}
}

// BenchmarkContainment is Fence.Resolve plus CheckWrite of a file six
// levels deep: the canonicalization (one lstat a component), the lexical
// containment test and the protected globs.
func BenchmarkContainment(b *testing.B) {
	ws := benchWorkspace(b)
	check := func(b *testing.B, f *Fence, path string) {
		t, err := f.Resolve(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.CheckWrite("write", &t); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("relative", func(b *testing.B) {
		f := NewFence(benchPolicy(ws))
		for b.Loop() {
			check(b, f, benchDeepRel)
		}
	})
	b.Run("absolute", func(b *testing.B) {
		f := NewFence(benchPolicy(ws))
		abs := filepath.Join(ws, benchDeepRel)
		for b.Loop() {
			check(b, f, abs)
		}
	})
	b.Run("missing_tail", func(b *testing.B) {
		// A new file in a new folder: the part that does not exist is
		// appended without lstat.
		f := NewFence(benchPolicy(ws))
		for b.Loop() {
			check(b, f, "src/internal/pkg/module/new/dir/file.go")
		}
	})
	b.Run("new_fence_per_call", func(b *testing.B) {
		// What one dsh-fs process pays: the fence is built for the call,
		// so the writable roots are canonicalized each time.
		for b.Loop() {
			check(b, NewFence(benchPolicy(ws)), benchDeepRel)
		}
	})
}

// BenchmarkCanonical is the canonicalization alone.
func BenchmarkCanonical(b *testing.B) {
	ws := benchWorkspace(b)
	if err := os.Symlink("src/internal", filepath.Join(ws, "link")); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"deep", benchDeepRel},
		{"symlink_hop", "link/pkg/module/sub/file.go"},
		{"dotdot", "src/internal/../internal/pkg/module/sub/file.go"},
		{"missing_tail", "src/internal/pkg/module/new/dir/file.go"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Canonical(ws, tc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
