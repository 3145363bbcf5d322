package repo

import (
	"errors"
	"flag"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// importsSection is the heading of ARCHITECTURE.md's import table.
const importsSection = "## Imports, package by package"

var updateImports = flag.Bool("update-imports", false, "write the code's import graph into ARCHITECTURE.md's import table")

// TestArchitectureImportGraph: ARCHITECTURE.md's import table is the
// code's import graph, both ways. Every package of the module that a
// build of this machine compiles has a row, and the row lists exactly the
// packages of this module its production files import: an arrow the code
// gained or lost, or a row for a package that is gone, fails here. With
// -update-imports the table is written from the code instead, for a
// person to read in the diff.
func TestArchitectureImportGraph(t *testing.T) {
	t.Parallel()
	file := filepath.Join(harness.RepoRoot, "ARCHITECTURE.md")
	doc := harness.ReadFile(t, file)
	code := codeImports(t)
	if *updateImports {
		updated, err := withImportTable(doc, code)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	mapped, err := mappedImports(doc)
	if err != nil {
		t.Fatalf("%v (go test ./e2e/repo -run TestArchitectureImportGraph -update-imports writes it)", err)
	}
	for _, pkg := range sortedKeys(keysOf(code)) {
		got, ok := mapped[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md's import table has no row for %s, which imports %s", pkg, listOrNone(code[pkg]))
			continue
		}
		for _, imp := range code[pkg] {
			if !slices.Contains(got, imp) {
				t.Errorf("%s imports %s, which ARCHITECTURE.md's import table does not say", pkg, imp)
			}
		}
		for _, imp := range got {
			if !slices.Contains(code[pkg], imp) {
				t.Errorf("ARCHITECTURE.md's import table says %s imports %s, which it does not", pkg, imp)
			}
		}
	}
	for pkg := range mapped {
		if _, ok := code[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md's import table has a row for %s, which is no package a build compiles", pkg)
		}
	}
}

// TestImportTableReadsBack: the table the update writes is the table the
// check reads, so the check compares what it should.
func TestImportTableReadsBack(t *testing.T) {
	t.Parallel()
	graph := map[string][]string{".": {"internal/cli"}, "internal/cli": {"internal/config", "internal/fserr"}, "internal/fserr": nil}
	doc := "# Architecture\n\n## Packages\n\ntext\n\n## Later\n\nmore\n"
	written, err := withImportTable(doc, graph)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(written, "## Later\n\nmore\n") || !strings.Contains(written, "\n"+importsSection+"\n") {
		t.Fatalf("the table was not put before the section after Packages:\n%s", written)
	}
	back, err := mappedImports(written)
	if err != nil {
		t.Fatal(err)
	}
	for pkg, imps := range graph {
		if !slices.Equal(back[pkg], imps) && !(len(imps) == 0 && len(back[pkg]) == 0) {
			t.Errorf("%s: wrote %v, read back %v", pkg, imps, back[pkg])
		}
	}
	if len(back) != len(graph) {
		t.Errorf("read back %d rows, wrote %d", len(back), len(graph))
	}
	again, err := withImportTable(written, graph)
	if err != nil || again != written {
		t.Errorf("writing the table twice changed it (err %v)", err)
	}
}

// codeImports maps every package folder of the module that a build on
// this machine compiles (slash-separated, relative to the root) to the
// packages of this module its production files import, sorted. Test
// files and files left out by build constraints do not count: the table
// is about what ships.
func codeImports(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	for _, folder := range goFolders(t) {
		pkg, err := build.Default.ImportDir(filepath.Join(harness.RepoRoot, filepath.FromSlash(folder)), 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			continue // tests only
		}
		if err != nil {
			t.Fatalf("%s: %v", folder, err)
		}
		var ours []string
		for _, imp := range pkg.Imports {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				ours = append(ours, rel)
			} else if imp == modulePath {
				ours = append(ours, ".")
			}
		}
		slices.Sort(ours)
		graph[folder] = ours
	}
	return graph
}

// importRow is a row of the import table: the package in backticks, then
// its imports in backticks, or "none".
var importRow = regexp.MustCompile("^\\| `([^`]+)` \\| (.*) \\|$")

// mappedImports reads ARCHITECTURE.md's import table.
func mappedImports(doc string) (map[string][]string, error) {
	_, section, ok := strings.Cut(doc, "\n"+importsSection+"\n")
	if !ok {
		return nil, fmt.Errorf("ARCHITECTURE.md has no section %q", importsSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	for line := range strings.SplitSeq(section, "\n") {
		m := importRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var imps []string
		for _, span := range codeSpan.FindAllStringSubmatch(m[2], -1) {
			imps = append(imps, span[1])
		}
		rows[m[1]] = imps
	}
	return rows, nil
}

// withImportTable is doc with its import table written from graph: the
// section replaced where it is, or put before the section that follows
// "## Packages".
func withImportTable(doc string, graph map[string][]string) (string, error) {
	var b strings.Builder
	b.WriteString(importsSection + "\n\n")
	b.WriteString("What each package's production files import of this module, as the\n")
	b.WriteString("build on Linux compiles them; `TestArchitectureImportGraph` checks it\n")
	b.WriteString("against the code both ways, and `go test ./e2e/repo -run\n")
	b.WriteString("TestArchitectureImportGraph -update-imports` writes it.\n\n")
	b.WriteString("| package | imports of this module |\n| --- | --- |\n")
	for _, pkg := range sortedKeys(keysOf(graph)) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", pkg, listOrNone(graph[pkg]))
	}
	table := b.String()
	if before, rest, ok := strings.Cut(doc, "\n"+importsSection+"\n"); ok {
		_, after, found := strings.Cut(rest, "\n## ")
		if !found {
			return before + "\n" + table, nil
		}
		return before + "\n" + table + "\n## " + after, nil
	}
	before, rest, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		return "", errors.New("ARCHITECTURE.md has no section \"## Packages\" to put the import table after")
	}
	packages, after, found := strings.Cut(rest, "\n## ")
	if !found {
		return before + "\n## Packages\n" + packages + "\n" + table, nil
	}
	return before + "\n## Packages\n" + packages + "\n" + table + "\n## " + after, nil
}

// listOrNone is imports in backticks, comma-separated, or "none".
func listOrNone(imports []string) string {
	if len(imports) == 0 {
		return "none"
	}
	quoted := make([]string, len(imports))
	for i, imp := range imports {
		quoted[i] = "`" + imp + "`"
	}
	return strings.Join(quoted, ", ")
}

func keysOf[V any](m map[string]V) map[string]bool {
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys
}
