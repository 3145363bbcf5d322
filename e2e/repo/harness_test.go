package repo

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// harnessImportPath is the package that turns a test binary into dsh-fs.
const harnessImportPath = "github.com/dshfs/dsh-fs/e2e/harness"

// TestHarnessOnlyForTests: no source but a _test.go file (and the
// harness's own) imports e2e/harness. It is a regular package so that
// every test package can share it, but its init leaves GOCOVERDIR
// writable to the kernel layer (cover.go, in dshfs_testhooks builds) and its dsh-fs takes the
// trusted locations from DSH_FS_TEST_*: linked into a command, either
// would weaken that command's fence.
func TestHarnessOnlyForTests(t *testing.T) {
	checked := 0
	for _, rel := range checkoutGoFiles(t) {
		if strings.HasPrefix(rel, "e2e/harness/") || strings.HasSuffix(rel, "_test.go") {
			continue
		}
		full := filepath.Join(harness.RepoRoot, rel)
		f, err := parser.ParseFile(token.NewFileSet(), full, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == harnessImportPath {
				t.Errorf("%s imports %s: only tests may", full, harnessImportPath)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Go source found under the repository root: the check saw nothing")
	}
}
