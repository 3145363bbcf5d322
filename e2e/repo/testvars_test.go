package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// mayWriteVars lists the package variables a test may write, each with
// its reason. A seam a test needs is a field or a parameter of the value
// or function that uses it, set on a value of the test's own, so no test
// changes what another one, run in parallel, sees.
var mayWriteVars = map[string]string{}

// TestNoTestWritesPackageVars: no _test.go file assigns to a package
// variable of the module's production code, its own package's or
// another's (pkg.Var), but those of mayWriteVars. The variables a test
// file declares itself are its own.
func TestNoTestWritesPackageVars(t *testing.T) {
	files := checkoutGoFiles(t)
	writes, checked, err := packageVarWrites(harness.RepoRoot, files)
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d test files: the walk is broken", checked)
	}
	for _, w := range writes {
		if _, ok := mayWriteVars[w.name]; !ok {
			t.Errorf("%s: a test writes the package variable %s: make it a field or a parameter of what uses it, set on the test's own value", w.pos, w.name)
		}
	}
}

// varWrite is one assignment of a test to a package variable: where, and
// the variable as "import/path.name".
type varWrite struct {
	pos  string
	name string
}

// packageVarWrites finds, in the Go files files (slash paths relative to
// root), each assignment a _test.go file makes to a package variable that
// a file other than a test declares: by its bare name in a test of its
// own package, or as pkg.Name from any test importing its package. The
// root of the assigned expression counts (v.f, v[i] and *v write v). A
// name the test file declares itself (a local, a parameter, a variable
// of its own) is resolved by the parser and is not one. checked is the
// number of test files looked at.
func packageVarWrites(root string, files []string) (writes []varWrite, checked int, err error) {
	fset := token.NewFileSet()
	// vars holds each package's production variables, by import path.
	vars := map[string]map[string]bool{}
	var tests []string
	for _, rel := range files {
		if strings.HasSuffix(rel, "_test.go") {
			tests = append(tests, rel)
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		pkg := importPath(rel)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name == "_" {
						continue
					}
					if vars[pkg] == nil {
						vars[pkg] = map[string]bool{}
					}
					vars[pkg][n.Name] = true
				}
			}
		}
	}
	for _, rel := range tests {
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, 0)
		if err != nil {
			return nil, 0, err
		}
		checked++
		own := importPath(rel)
		if strings.HasSuffix(f.Name.Name, "_test") {
			own = "" // an external test package sees only exported names, through an import
		}
		imports := map[string]string{} // name in the file -> import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		written := func(lhs ast.Expr) {
			if pkg, name := assignedVar(lhs, imports, own); vars[pkg][name] {
				writes = append(writes, varWrite{fset.Position(lhs.Pos()).String(), pkg + "." + name})
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE {
					for _, lhs := range n.Lhs {
						written(lhs)
					}
				}
			case *ast.IncDecStmt:
				written(n.X)
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					for _, e := range []ast.Expr{n.Key, n.Value} {
						if e != nil {
							written(e)
						}
					}
				}
			}
			return true
		})
	}
	slices.SortFunc(writes, func(a, b varWrite) int { return strings.Compare(a.pos, b.pos) })
	return writes, checked, nil
}

// assignedVar is the package variable lhs writes, as its package's import
// path and its name, or "", "". A bare name the file does not declare is
// own's; pkg.Name is the imported package's.
func assignedVar(lhs ast.Expr, imports map[string]string, own string) (pkg, name string) {
	for {
		switch e := lhs.(type) {
		case *ast.Ident:
			if e.Obj != nil || own == "" {
				return "", "" // declared in the file: a local, a parameter, the test's own
			}
			return own, e.Name
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && x.Obj == nil {
				if p, ok := imports[x.Name]; ok {
					return p, e.Sel.Name
				}
			}
			lhs = e.X
		case *ast.IndexExpr:
			lhs = e.X
		case *ast.IndexListExpr:
			lhs = e.X
		case *ast.StarExpr:
			lhs = e.X
		case *ast.ParenExpr:
			lhs = e.X
		default:
			return "", ""
		}
	}
}

// importPath is the import path of the package of the file rel.
func importPath(rel string) string {
	if dir := path.Dir(rel); dir != "." {
		return modulePath + "/" + dir
	}
	return modulePath
}

// plantedWrite is one statement planted in a test file of a package that
// declares the variables seam and conf and exports Seam, and whether the
// check must find a write of a package variable in it.
type plantedWrite struct {
	name    string
	pkg     string // the test file's package clause: "x", or "x_test"
	imports []string
	body    string
	want    bool
}

var plantedWrites = []plantedWrite{
	{"assignment", "x", nil, `seam = 2`, true},
	{"restored by a deferred call", "x", nil, `defer func(v int) { seam = v }(seam)`, true},
	{"increment", "x", nil, `seam++`, true},
	{"operator assignment", "x", nil, `seam += 2`, true},
	{"a field of it", "x", nil, `conf.n = 3`, true},
	{"range into it", "x", nil, `for seam = range 3 {}`, true},
	{"an exported one from an external test", "x_test", []string{`"github.com/dshfs/dsh-fs/internal/x"`}, `x.Seam = 1`, true},
	{"through a renamed import", "x_test", []string{`y "github.com/dshfs/dsh-fs/internal/x"`}, `y.Seam = 1`, true},
	// Controls: nothing here writes a package variable.
	{"control: a local of the same name", "x", nil, `seam := 1; seam = 2; _ = seam`, false},
	{"control: a parameter of the same name", "x", nil, `f := func(seam int) { seam = 1 }; f(0)`, false},
	{"control: the test's own variable", "x", nil, `mine = 1`, false},
	{"control: read only", "x", nil, `_ = seam + conf.n`, false},
	{"control: a local struct's field", "x", nil, `var c struct{ seam int }; c.seam = 1`, false},
}

// TestTestVarsCatchesPlanted plants each statement of plantedWrites in a
// test file beside a package that declares the variables, alone in a
// tree laid out as the repository, and runs the check's function on it:
// each planted write must be found, naming the variable; each control
// must not.
func TestTestVarsCatchesPlanted(t *testing.T) {
	const prod = "package x\n\nvar (\n\tseam = 1\n\tconf struct{ n int }\n\tSeam = 2\n)\n"
	for _, c := range plantedWrites {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			test := "package " + c.pkg + "\n\n"
			if len(c.imports) > 0 {
				test += "import (\n\t" + strings.Join(c.imports, "\n\t") + "\n)\n\n"
			}
			test += "var mine int\n\nfunc TestPlanted() {\n\t" + c.body + "\n}\n"
			must(t, os.MkdirAll(filepath.Join(root, "internal/x"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "internal/x/x.go"), []byte(prod), 0o644))
			must(t, os.WriteFile(filepath.Join(root, "internal/x/planted_test.go"), []byte(test), 0o644))
			writes, checked, err := packageVarWrites(root, []string{"internal/x/x.go", "internal/x/planted_test.go"})
			if err != nil {
				t.Fatal(err)
			}
			if checked != 1 {
				t.Fatalf("checked %d test files, want the one planted", checked)
			}
			switch {
			case c.want && (len(writes) != 1 || !strings.HasSuffix(writes[0].name, "/internal/x."+plantedVar(c.body))):
				t.Errorf("%s: want one write of %s found, got %v", c.body, plantedVar(c.body), writes)
			case !c.want && len(writes) > 0:
				t.Errorf("%s: writes no package variable, but the check found %v", c.body, writes)
			}
		})
	}
}

// plantedVar is the package variable a planted write names.
func plantedVar(body string) string {
	for _, v := range []string{"Seam", "conf", "seam"} {
		if strings.Contains(body, v) {
			return v
		}
	}
	return ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
