package search

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestFindGlobAsGlobMatch pins find's compiled glob (the string compares
// for the usual shapes) to what globMatch, doublestar's, says of the same
// glob and path: the fast paths change the cost, never the answer.
func TestFindGlobAsGlobMatch(t *testing.T) {
	globs := []string{
		"*.go", "*", "**", "**/*.go", "**/go.mod", "go.mod", "*_test.go", "*.", ".*", "*.tar.gz",
		"**/", "**/**", "**/a/*.go", "a/*.go", "a/**", "*.[ch]", "*.{go,mod}", "\\*.go", "*\\.go",
		"?.go", "a*", "", "*é", "**/*é", "**/?.go", "**/[xy].go",
	}
	rels := []string{
		"x.go", "a/x.go", "a/b/x.go", ".go", ".hidden.go", "x.go.bak", "go.mod", "a/go.mod", "xgo",
		"a", "a/b", "x_test.go", "x.", "x.tar.gz", "x.c", "x.h", "*.go", "a/*.go", "y", "\xff.go",
		"a/\xff.go", "é", "aé", "a/é",
	}
	for _, g := range globs {
		byName, byPath := compileFindGlob(g)
		if (byName == nil) == (byPath == nil) {
			t.Fatalf("glob %q: want one test, on the name or on the path", g)
		}
		for _, rel := range rels {
			got := false
			if byName != nil {
				got = byName(path.Base(rel))
			} else {
				got = byPath(rel)
			}
			if want := globMatch(g, rel); got != want {
				t.Errorf("glob %q, path %q: compiled %v, globMatch %v", g, rel, got, want)
			}
		}
	}
}

// TestFoundJSONLen pins the counted length of a found entry, which bounds
// find's result (--max-bytes), to json.Marshal's, escapes included.
func TestFoundJSONLen(t *testing.T) {
	for _, f := range []Found{
		{Path: "a.go", Type: fsops.TypeFile, Size: 0},
		{Path: "src/a b/c.go", Type: fsops.TypeDir, Size: 4096},
		{Path: "a<b>&c", Type: fsops.TypeFile, Size: -1},
		{Path: "q\"uote\\d", Type: fsops.TypeSymlink, Size: 12},
		{Path: "tab\there\n", Type: fsops.TypeOther, Size: 1 << 40},
		{Path: "é/\xff\xfe", Type: fsops.TypeFile, Size: 7},
		{Path: "\u2028", Type: fsops.TypeFile, Size: 7},
		{Path: "", Type: fsops.TypeFile, Size: 9999999},
	} {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.jsonLen(); got != len(b) {
			t.Errorf("%q: jsonLen %d, json.Marshal %d (%s)", f.Path, got, len(b), b)
		}
	}
}

// BenchmarkFindGoSource finds '*.go' in the Go standard library's source
// with the default bounds, without and with the usual deny list: the
// walk, the matcher and the entries shown (scripts/bench.sh compares the
// same with find -name).
func BenchmarkFindGoSource(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source:", err)
	}
	for _, list := range []struct {
		name string
		deny []string
	}{{"no_list", nil}, {"deny_list", benchDenyList}} {
		f := sandbox.NewFence(policy.Policy{Mode: policy.ReadOnly, Cwd: src, MaxMode: policy.ReadOnly,
			Home: b.TempDir(), DenyRead: list.deny})
		t, err := f.Resolve(".")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(list.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := Find(f, t, FindOptions{Glob: "*.go", Limit: DefaultFindLimit, MaxBytes: DefaultSearchMaxBytes})
				if err != nil || res.Total == 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}
