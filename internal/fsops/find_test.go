package fsops

import (
	"encoding/json"
	"path"
	"testing"
)

// TestFindGlobAsGlobMatch pins find's compiled glob (the string compares
// for the usual shapes) to what globMatch, doublestar's, says of the same
// glob and path: the fast paths change the cost, never the answer.
func TestFindGlobAsGlobMatch(t *testing.T) {
	globs := []string{
		"*.go", "*", "**", "**/*.go", "**/go.mod", "go.mod", "*_test.go", "*.", ".*", "*.tar.gz",
		"**/", "**/**", "**/a/*.go", "a/*.go", "a/**", "*.[ch]", "*.{go,mod}", "\\*.go", "*\\.go",
		"?.go", "a*", "", "*é", "**/*é",
	}
	rels := []string{
		"x.go", "a/x.go", "a/b/x.go", ".go", ".hidden.go", "x.go.bak", "go.mod", "a/go.mod", "xgo",
		"a", "a/b", "x_test.go", "x.", "x.tar.gz", "x.c", "x.h", "*.go", "a/*.go", "y", "\xff.go",
		"a/\xff.go", "é", "aé", "a/é",
	}
	for _, g := range globs {
		match := compileFindGlob(g)
		for _, rel := range rels {
			if got, want := match(path.Base(rel), rel), globMatch(g, rel); got != want {
				t.Errorf("glob %q, path %q: compiled %v, globMatch %v", g, rel, got, want)
			}
		}
	}
}

// TestFoundJSONLen pins the counted length of a found entry, which bounds
// find's result (--max-bytes), to json.Marshal's, escapes included.
func TestFoundJSONLen(t *testing.T) {
	for _, f := range []Found{
		{Path: "a.go", Type: TypeFile, Size: 0},
		{Path: "src/a b/c.go", Type: TypeDir, Size: 4096},
		{Path: "a<b>&c", Type: TypeFile, Size: -1},
		{Path: "q\"uote\\d", Type: TypeSymlink, Size: 12},
		{Path: "tab\there\n", Type: TypeOther, Size: 1 << 40},
		{Path: "é/\xff\xfe", Type: TypeFile, Size: 7},
		{Path: "\u2028", Type: TypeFile, Size: 7},
		{Path: "", Type: TypeFile, Size: 9999999},
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
