package repo

// The comments of the production code say what is and why, for a reader
// who has only the code: no issue numbers or other references to the
// tracker, and doc comments of top-level declarations short enough to
// read at a glance (maxDocLines). Package doc comments and doc.go files
// are the package's overview and may run longer.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// maxDocLines is the most lines a doc comment of a top-level declaration
// may have.
const maxDocLines = 10

// issueRef is a reference to the tracker in a comment's text, its lines
// joined: "issue 26", "issues 25 and 26", "#41".
var issueRef = regexp.MustCompile(`(?i)\bissues?\s+#?\d+|(^|[\s(\[,])#\d+\b`)

// commentSkipsForNow are the files (relative, slash-separated) the
// comment checks skip, for each check ("issue" or "doc"): files being
// moved by other work when the checks came in. Each entry must still
// have a fault, so the list shrinks to empty as they are cleaned.
var commentSkipsForNow = map[string][]string{}

// commentFault is a comment the checks refuse.
type commentFault struct {
	check string // "issue" or "doc", as commentSkipsForNow names them
	file  string
	line  int
	what  string
}

func (f commentFault) String() string {
	return fmt.Sprintf("%s:%d: %s", f.file, f.line, f.what)
}

// commentFaults parses one production file, named rel in the faults, and
// returns its comments that cite the tracker and its doc comments of
// top-level declarations over maxDocLines.
func commentFaults(rel string, src []byte) ([]commentFault, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var faults []commentFault
	for _, g := range f.Comments {
		text := strings.Join(strings.Fields(g.Text()), " ")
		if m := issueRef.FindString(text); m != "" {
			faults = append(faults, commentFault{check: "issue", file: rel, line: fset.Position(g.Pos()).Line,
				what: fmt.Sprintf("cites the tracker (%q): say what is and why instead", strings.TrimSpace(m))})
		}
	}
	if filepath.Base(rel) == "doc.go" {
		return faults, nil
	}
	long := func(name string, doc *ast.CommentGroup) {
		if doc == nil {
			return
		}
		start, end := fset.Position(doc.Pos()).Line, fset.Position(doc.End()).Line
		n := end - start + 1
		for _, c := range doc.List {
			if strings.HasPrefix(c.Text, "//go:") {
				n-- // a directive, not part of what a reader reads
			}
		}
		if n > maxDocLines {
			faults = append(faults, commentFault{check: "doc", file: rel, line: start,
				what: fmt.Sprintf("the doc comment of %s has %d lines, over %d: say what it is and why, in a few", name, n, maxDocLines)})
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			long(funcName(d), d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					long(s.Name.Name, specDoc(s.Doc, d))
				case *ast.ValueSpec:
					long(s.Names[0].Name, specDoc(s.Doc, d))
				}
			}
			if d.Lparen.IsValid() {
				long(d.Tok.String()+" block", d.Doc)
			}
		}
	}
	return faults, nil
}

// specDoc is the doc comment of a spec of decl: its own, or, where decl
// has no parentheses, decl's.
func specDoc(own *ast.CommentGroup, decl *ast.GenDecl) *ast.CommentGroup {
	if own == nil && !decl.Lparen.IsValid() {
		return decl.Doc
	}
	return own
}

// checkComments checks every production Go file under root, and those
// under pkg/. It returns the faults skips does not cover and the skips
// that cover no fault, as "check file".
func checkComments(root string, skips map[string][]string) (faults []commentFault, unused []string, err error) {
	allowed := map[string]bool{}
	for check, files := range skips {
		for _, file := range files {
			allowed[check+" "+file] = true
		}
	}
	return checkProduction(root, commentFaults, func(f commentFault) string { return f.check + " " + f.file }, allowed)
}

// TestCommentsSayWhatIs holds the production code's comments to the
// rules above; a skipped file that has nothing left to skip fails too.
func TestCommentsSayWhatIs(t *testing.T) {
	t.Parallel()
	faults, unused, err := checkComments(harness.RepoRoot, commentSkipsForNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		t.Error(f)
	}
	for _, u := range unused {
		t.Errorf("commentSkipsForNow skips %s, which has nothing left to skip: remove it", u)
	}
}

// TestCommentsReportPlanted plants, in a tree of its own, comments the
// checks refuse beside ones they allow, and requires checkComments to
// report exactly the former, and a skip that covers nothing.
func TestCommentsReportPlanted(t *testing.T) {
	t.Parallel()
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
	doc := func(n int) string { return strings.Repeat("// a line of the doc\n", n) }

	write("internal/a/a.go", "// Package a has a long doc comment, allowed.\n"+doc(20)+"package a\n\n"+
		"// cited is found (issue\n// 26), across two lines.\nfunc cited() {}\n\n"+
		"func body() {\n\t_ = 0 // fixed in #41\n}\n\n"+
		"// plain says 26 issues and a number sign # 3 apart: allowed.\nfunc plain() {}\n\n"+
		"// within is ten lines.\n"+doc(9)+"func within() {}\n\n"+
		"// tooLong is eleven.\n"+doc(10)+"func tooLong() {}\n\n"+
		"// T is eleven.\n"+doc(10)+"type T struct {\n\t// Field docs are not top-level.\n"+doc(12)+"\tField int\n}\n\n"+
		"// method is eleven.\n"+doc(10)+"func (T) method() {}\n\n"+
		"const (\n\t// inGroup is eleven.\n"+doc(10)+"\tinGroup = 1\n)\n\n"+
		"// v is eleven.\n"+doc(10)+"var v = 1\n\n"+
		"// directives is ten lines and a directive.\n"+doc(9)+"//go:noinline\nfunc directives() {}\n")
	write("internal/a/doc.go", doc(20)+"package a\n\n// OK in doc.go.\n"+doc(20)+"var w = 1\n")
	write("internal/a/a_test.go", "package a\n\n// issue 1 in a test.\n"+doc(20)+"func TestX() {}\n")
	write("internal/a/testdata/x.go", "package x\n\n// issue 2 in testdata.\nvar x = 1\n")
	write("internal/skipped/s.go", "package s\n\n// issue 3 skipped.\nvar s = 1\n\n// S is eleven.\n"+doc(10)+"var S = 1\n")
	write("main.go", "package main\n\n// main (issue 4).\nfunc main() {}\n")

	skips := map[string][]string{
		"issue": {"internal/skipped/s.go", "internal/a/within.go"},
		"doc":   {"internal/skipped/s.go", "main.go"},
	}
	faults, unused, err := checkComments(root, skips)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range faults {
		got = append(got, f.check+" "+f.file+":"+fmt.Sprint(f.line))
	}
	want := []string{
		"issue internal/a/a.go:24", // cited
		"issue internal/a/a.go:29", // in body
		"doc internal/a/a.go:47",   // tooLong
		"doc internal/a/a.go:60",   // T
		"doc internal/a/a.go:88",   // method
		"doc internal/a/a.go:102",  // inGroup
		"doc internal/a/a.go:116",  // v
		"issue main.go:3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("faults:\n got %q\nwant %q", got, want)
	}
	wantUnused := []string{"doc main.go", "issue internal/a/within.go"}
	if !slices.Equal(unused, wantUnused) {
		t.Errorf("unused skips:\n got %q\nwant %q", unused, wantUnused)
	}

	// A file that does not parse is an error, never a pass.
	write("internal/broken/broken.go", "package broken\n\nfunc {\n")
	if _, _, err := checkComments(root, nil); err == nil {
		t.Error("checkComments passed a file that does not parse")
	}
}
