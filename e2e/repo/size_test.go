package repo

// The size budget of the production code: no file over
// maxFileLines, and no function over maxFuncLines unless a line of its
// doc comment starting "// long:" says why its length is the clearest
// form (a table, a switch over every case). What cannot meet the budget
// yet is in sizeExceptions, with the reason; an exception nothing needs
// any more fails too, so the list stays exact.

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

const (
	// maxFileLines is the most lines a production Go file may have.
	maxFileLines = 800
	// maxFuncLines is the most lines, from func to its closing brace, a
	// function may have without a "// long:" reason.
	maxFuncLines = 100
	// longReason opens the doc comment line that explains a long function.
	longReason = "// long:"
)

// sizeExceptions are the files ("internal/x/y.go") and functions
// ("internal/x/y.go:name", a method "internal/x/y.go:Type.name", a func
// literal of a top-level variable "internal/x/y.go:variable") allowed
// over the budget, each with why. Each must still be over it.
var sizeExceptions = map[string]string{}

// sizeFault is a file or a function over the budget.
type sizeFault struct {
	key   string // as sizeExceptions names it
	lines int
	limit int
}

func (f sizeFault) String() string {
	return fmt.Sprintf("%s: %d lines, over %d", f.key, f.lines, f.limit)
}

// productionGoFiles lists, relative to root and slash-separated, the Go
// files that are not tests under internal/, cmd/, pkg/ and scripts/ (testdata
// and folders starting with "." or "_" skipped, as the go command skips
// them) and in root itself.
func productionGoFiles(root string) ([]string, error) {
	var files []string
	isProduction := func(name string) bool {
		return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && isProduction(e.Name()) {
			files = append(files, e.Name())
		}
	}
	for _, top := range []string{"internal", "cmd", "pkg", "scripts"} {
		if _, err := os.Lstat(filepath.Join(root, top)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, top), func(full string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && isProduction(name) {
				rel, err := filepath.Rel(root, full)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	return files, nil
}

// sizeFaults parses one file, named rel in the faults, and returns what
// in it is over the budget: the file itself, and each function, method
// or func literal of a top-level variable whose doc comment gives no
// "// long:" reason.
func sizeFaults(rel string, src []byte) ([]sizeFault, error) {
	var faults []sizeFault
	lines := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	if lines > maxFileLines {
		faults = append(faults, sizeFault{key: rel, lines: lines, limit: maxFileLines})
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	span := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	check := func(name string, n ast.Node, docs ...*ast.CommentGroup) {
		if n := span(n); n > maxFuncLines && !hasLongReason(docs...) {
			faults = append(faults, sizeFault{key: rel + ":" + name, lines: n, limit: maxFuncLines})
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				check(funcName(d), d, d.Doc)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					name := vs.Names[min(i, len(vs.Names)-1)].Name
					ast.Inspect(v, func(n ast.Node) bool {
						if lit, ok := n.(*ast.FuncLit); ok {
							check(name, lit, d.Doc, vs.Doc)
							return false
						}
						return true
					})
				}
			}
		}
	}
	return faults, nil
}

// funcName is a function's name, a method's prefixed with its receiver's
// type ("supervisor.runCommand").
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

// hasLongReason reports whether a line of the doc comments starts with
// "// long:" and goes on to say something.
func hasLongReason(docs ...*ast.CommentGroup) bool {
	for _, doc := range docs {
		if doc == nil {
			continue
		}
		for _, c := range doc.List {
			if why, ok := strings.CutPrefix(c.Text, longReason); ok && strings.TrimSpace(why) != "" {
				return true
			}
		}
	}
	return false
}

// checkSizes checks every production Go file under root against the
// budget. It returns the faults no exception covers and the exceptions
// that cover no fault.
func checkSizes(root string, exceptions map[string]string) (faults []sizeFault, unused []string, err error) {
	allowed := map[string]bool{}
	for key := range exceptions {
		allowed[key] = true
	}
	return checkProduction(root, sizeFaults, func(f sizeFault) string { return f.key }, allowed)
}

// checkProduction runs faultsOf over every production Go file under root.
// A fault whose key is in allowed is let be; it returns the others, and
// the allowed keys no fault used, sorted, so an exception outlives no
// fault.
func checkProduction[F any](root string, faultsOf func(rel string, src []byte) ([]F, error), key func(F) string, allowed map[string]bool) (faults []F, unused []string, err error) {
	files, err := productionGoFiles(root)
	if err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		found, err := faultsOf(rel, src)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range found {
			if k := key(f); allowed[k] {
				used[k] = true
				continue
			}
			faults = append(faults, f)
		}
	}
	for k := range allowed {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	slices.Sort(unused)
	return faults, unused, nil
}

// TestSizes holds the repository to the budget: a file over 800 lines or
// a function over 100 without a "// long:" reason fails, and so does an
// exception that is no longer needed.
func TestSizes(t *testing.T) {
	faults, unused, err := checkSizes(harness.RepoRoot, sizeExceptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		t.Errorf("%s: split it, or for a function say why its length is the clearest form in a %q line of its doc comment", f, longReason)
	}
	for _, key := range unused {
		t.Errorf("sizeExceptions[%q] is no longer needed: remove it", key)
	}
}

// TestSizesReportPlanted plants, in a tree of its own, what the budget
// forbids beside what it allows, and requires checkSizes to report
// exactly the former, and an exception that covers nothing.
func TestSizesReportPlanted(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// body is n lines of a function or literal, from its func line to
	// its closing brace.
	body := func(n int) string {
		return strings.Repeat("\t_ = 0\n", n-2) + "}\n"
	}
	padding := func(n int) string { return strings.Repeat("// padding\n", n) }

	// An 801-line file; 800 lines is within.
	write("internal/big/big.go", "package big\n"+padding(800))
	write("internal/big/edge.go", "package big\n"+padding(799))
	write("internal/fn/fn.go", "package fn\n\n"+
		"func long() {\n"+body(101)+
		"func within() {\n"+body(100)+
		"// explained has a reason.\n//\n// long: one switch over every op.\nfunc explained() {\n"+body(101)+
		"// emptyReason says nothing after the marker.\n// long:\nfunc emptyReason() {\n"+body(101)+
		"type T struct{}\n\nfunc (*T) method() {\n"+body(101)+
		"var literal = func() {\n"+body(101)+
		"// explainedLiteral has a reason.\n// long: a table.\nvar explainedLiteral = func() {\n"+body(101)+
		"func covered() {\n"+body(101))
	// Outside the production code: tests, testdata, e2e, and a file
	// in a folder the go command skips.
	write("internal/fn/fn_test.go", "package fn\n\nfunc testLong() {\n"+body(200))
	write("internal/fn/testdata/x.go", "package x\n"+padding(900))
	write("internal/_skip/x.go", "package x\n"+padding(900))
	write("e2e/x/x.go", "package x\n"+padding(900))
	// The root's own files count; cmd/ and scripts/ too.
	write("main.go", "package main\n\nfunc main() {\n"+body(102))
	write("cmd/tool/main.go", "package main\n"+padding(801))
	write("scripts/s/main.go", "package main\n\nfunc main() {\n"+body(101))

	// fn.go is over 800 lines too: its exception covers the file,
	// never the functions in it.
	exceptions := map[string]string{
		"internal/fn/fn.go":           "planted",
		"internal/fn/fn.go:covered":   "planted",
		"internal/fn/fn.go:gone":      "planted, covers nothing",
		"internal/big/edge.go":        "planted, within the budget",
		"internal/fn/fn.go:T.method2": "planted, no such method",
	}
	faults, unused, err := checkSizes(root, exceptions)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range faults {
		got = append(got, f.String())
	}
	want := []string{
		"cmd/tool/main.go: 802 lines, over 800",
		"internal/big/big.go: 801 lines, over 800",
		"internal/fn/fn.go:long: 101 lines, over 100",
		"internal/fn/fn.go:emptyReason: 101 lines, over 100",
		"internal/fn/fn.go:T.method: 101 lines, over 100",
		"internal/fn/fn.go:literal: 101 lines, over 100",
		"main.go:main: 102 lines, over 100",
		"scripts/s/main.go:main: 101 lines, over 100",
	}
	if !slices.Equal(got, want) {
		t.Errorf("faults:\n got %q\nwant %q", got, want)
	}
	wantUnused := []string{"internal/big/edge.go", "internal/fn/fn.go:T.method2", "internal/fn/fn.go:gone"}
	if !slices.Equal(unused, wantUnused) {
		t.Errorf("unused exceptions:\n got %q\nwant %q", unused, wantUnused)
	}

	// A file that does not parse is an error, never a pass.
	write("internal/broken/broken.go", "package broken\n\nfunc {\n")
	if _, _, err := checkSizes(root, nil); err == nil {
		t.Error("checkSizes passed a file that does not parse")
	}
}
