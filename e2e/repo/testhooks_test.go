package repo

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// testHooksTag is the build tag of the test hooks: files that need it are
// compiled into test binaries built with -tags dshfs_testhooks, never into
// a release build (go build ., go build ./cmd/...).
const testHooksTag = "dshfs_testhooks"

// testHookNames are the identifiers of the kernel layer's test hook: the
// unexported folders (written only by the hook) and the hook itself.
const (
	hookVar    = "kernelWritableExtra"
	hookSetter = "SetKernelWritableExtra"
)

// TestTestHooksOutOfRelease (issue 27): nothing a release build compiles
// can widen the kernel layer. Two halves: go list shows the hook's files
// out of the default build and in the tagged one; and the AST of every
// Go file of the product a release build compiles assigns no
// kernelWritableExtra and neither declares nor calls
// SetKernelWritableExtra. The controls (the tagged files do both) show
// the walk would see a hook if one were there.
func TestTestHooksOutOfRelease(t *testing.T) {
	for _, c := range []struct{ pkg, hookFile, offFile string }{
		{"./internal/sandbox", "testhooks.go", ""},
		{"./internal/session/child", "testhooks.go", ""},
		{"./e2e/harness", "cover.go", "cover_off.go"},
	} {
		release := goListFiles(t, c.pkg)
		tagged := goListFiles(t, c.pkg, "-tags", testHooksTag)
		if slices.Contains(release, c.hookFile) {
			t.Errorf("%s: a build without -tags %s compiles %s: %v", c.pkg, testHooksTag, c.hookFile, release)
		}
		if !slices.Contains(tagged, c.hookFile) {
			t.Errorf("control: %s: the -tags %s build does not compile %s: %v", c.pkg, testHooksTag, c.hookFile, tagged)
		}
		if c.offFile != "" && (!slices.Contains(release, c.offFile) || slices.Contains(tagged, c.offFile)) {
			t.Errorf("%s: %s must be in the untagged build only: release %v, tagged %v", c.pkg, c.offFile, release, tagged)
		}
	}

	fset := token.NewFileSet()
	var declared, set, called []string // in files only the tag compiles
	checked := 0
	for _, rel := range checkoutGoFiles(t) {
		if strings.HasSuffix(rel, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(harness.RepoRoot, rel), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		hookOnly := needsTag(file, testHooksTag)
		found := func(list *[]string, what string, pos token.Pos) {
			if hookOnly {
				*list = append(*list, rel)
				return
			}
			t.Errorf("%s: %s in a file a release build compiles: only a //go:build %s file may", fset.Position(pos), what, testHooksTag)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == hookSetter {
					found(&declared, "declares "+hookSetter, n.Pos())
				}
			case *ast.SelectorExpr:
				if n.Sel.Name == hookSetter {
					found(&called, "calls "+hookSetter, n.Pos())
				}
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if assignsTo(lhs, hookVar) {
						found(&set, "assigns "+hookVar, n.Pos())
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: the walk is broken", checked)
	}
	if len(declared) == 0 || len(set) == 0 || len(called) == 0 {
		t.Errorf("control: the tagged files should declare (%v), assign (%v) and call (%v) the hook", declared, set, called)
	}
}

// goListFiles is the GoFiles go list reports for pkg, with extra flags.
func goListFiles(t *testing.T, pkg string, flags ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to list a package's files")
	}
	args := append(append([]string{"list"}, flags...), "-f", "{{join .GoFiles \" \"}}", pkg)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = harness.RepoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// needsTag reports whether file's //go:build line makes tag a condition:
// false with tag unset, whatever the other tags are (tried all set and
// all unset).
func needsTag(file *ast.File, tag string) bool {
	for _, group := range file.Comments {
		if group.Pos() > file.Package {
			break
		}
		for _, c := range group.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			for _, others := range []bool{true, false} {
				if expr.Eval(func(t string) bool { return t != tag && others }) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// assignsTo reports whether lhs, the left side of an assignment, is name
// or an element or field of it.
func assignsTo(lhs ast.Expr, name string) bool {
	for {
		switch e := lhs.(type) {
		case *ast.Ident:
			return e.Name == name
		case *ast.IndexExpr:
			lhs = e.X
		case *ast.SelectorExpr:
			if e.Sel.Name == name {
				return true
			}
			lhs = e.X
		case *ast.StarExpr:
			lhs = e.X
		case *ast.ParenExpr:
			lhs = e.X
		default:
			return false
		}
	}
}
