package repo

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// testName is a test function named in backticks, with what follows it
// on the page: `TestFoo` (e2e/repo/foo_test.go) or `TestFoo`, e2e/x_test.go.
var testName = regexp.MustCompile("`(Test[A-Za-z0-9_]+)`[,;]?\\s*\\(?\\s*([A-Za-z0-9_./-]+_test\\.go)?")

// TestDocsNameTestsThatExist: a test the map or a document names in
// backticks is declared in some _test.go of the checkout, and where the
// page says which file holds it, that file does. A test renamed or moved
// without its mention fails here, naming the page and the stale name.
func TestDocsNameTestsThatExist(t *testing.T) {
	t.Parallel()
	declared := testDeclarations(t)
	pages := []string{"ARCHITECTURE.md", "README.md"}
	pages = append(pages, relAll(t, docPages(t))...)
	for _, page := range pages {
		text := harness.ReadFile(t, filepath.Join(harness.RepoRoot, page))
		for _, m := range testName.FindAllStringSubmatch(text, -1) {
			name, file := m[1], m[2]
			files, ok := declared[name]
			switch {
			case !ok:
				t.Errorf("%s names %s, which no _test.go declares", page, name)
			case file != "" && !files[file]:
				t.Errorf("%s says %s is in %s; it is in %s", page, name, file, strings.Join(sortedKeys(files), ", "))
			}
		}
	}
}

// testDeclarations maps each top-level Test function of the checkout's
// _test.go files to the files (slash-separated, from the repository
// root) that declare it.
func testDeclarations(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, f := range checkoutGoFiles(t) {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(harness.RepoRoot, filepath.FromSlash(f)))
		if err != nil {
			continue // deleted in the working tree but still listed
		}
		file, err := parser.ParseFile(token.NewFileSet(), path.Base(f), src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names := map[string]bool{}
		addDeclarations(names, file)
		for n := range names {
			if strings.HasPrefix(n, "Test") && !strings.Contains(n, ".") {
				if out[n] == nil {
					out[n] = map[string]bool{}
				}
				out[n][f] = true
			}
		}
	}
	return out
}
