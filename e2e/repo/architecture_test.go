package repo

// The map in the repository (issue 27): ARCHITECTURE.md names every
// package folder and the functions its data flows go through, the README
// stays the short way in, and no relative link in the documentation
// points at a file or a heading that is gone. Each check reads the files
// as committed; none builds or runs anything.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// readmeMaxBytes is the README's budget: the way in, not the reference.
const readmeMaxBytes = 15_000

// goFolders lists, relative to the repository root and slash-separated,
// every folder holding a .go file of the checkout (checkoutGoFiles).
func goFolders(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range checkoutGoFiles(t) {
		seen[path.Dir(f)] = true
	}
	return sortedKeys(seen)
}

// checkoutGoFiles lists, relative to the repository root and
// slash-separated, the .go files of the checkout, tracked or new, never
// what .gitignore leaves out (bench/tmp's scratch trees, a bench run's
// module cache), and none the go command skips: in testdata or a folder
// whose name starts with "." or "_".
func checkoutGoFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", harness.RepoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.go").Output()
	if err != nil {
		t.Skipf("the Go files checked are the checkout's, and git cannot list it here: %v", err)
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if dir := path.Dir(f); f != "" && (dir == "." || !slices.ContainsFunc(strings.Split(dir, "/"), skippedByGo)) {
			files = append(files, f)
		}
	}
	return files
}

// skippedByGo says the go command leaves out a folder of this name.
func skippedByGo(name string) bool {
	return name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func sortedKeys(seen map[string]bool) []string {
	folders := make([]string, 0, len(seen))
	for f := range seen {
		folders = append(folders, f)
	}
	slices.Sort(folders)
	return folders
}

// tableFolder is a row of ARCHITECTURE.md's package table: a first cell
// that is one folder in backticks.
var tableFolder = regexp.MustCompile("^\\| `([^`]+)` \\|")

// mappedFolders are the folders the package table of ARCHITECTURE.md
// (the section "## Packages") names.
func mappedFolders(t *testing.T, doc string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no section \"## Packages\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var folders []string
	for line := range strings.SplitSeq(section, "\n") {
		if m := tableFolder.FindStringSubmatch(line); m != nil {
			folders = append(folders, strings.TrimSuffix(m[1], "/"))
		}
	}
	return folders
}

// TestArchitectureNamesEveryPackage: every folder holding Go files is a
// row of ARCHITECTURE.md's package table, and every row is such a folder.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	t.Parallel()
	doc := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "ARCHITECTURE.md"))
	have, named := goFolders(t), mappedFolders(t, doc)
	for _, f := range have {
		if !slices.Contains(named, f) {
			t.Errorf("ARCHITECTURE.md does not name the package folder %s: add a row `%s` | its one job |", f, f)
		}
	}
	for _, f := range named {
		if !slices.Contains(have, f) {
			t.Errorf("ARCHITECTURE.md names %s, which is no folder holding Go files: drop or rename its row", f)
		}
	}
}

// codeSpan is text in backticks on one line.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// qualified is pkg.Name or pkg.Type.Name.
var qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?$`)

// TestArchitectureNamesExist: what ARCHITECTURE.md names in backticks is
// there: a path into the repository exists, and pkg.Func, pkg.Type or
// pkg.Type.Method (a field counts) of one of this module's packages is
// declared in that package. A rename or a move that leaves the map
// behind fails here, naming the stale entry.
func TestArchitectureNamesExist(t *testing.T) {
	t.Parallel()
	doc := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "ARCHITECTURE.md"))
	decls := moduleDeclarations(t)
	imported := importedNames(t)
	seen := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		span := m[1]
		if seen[span] {
			continue
		}
		seen[span] = true
		if q := qualified.FindStringSubmatch(span); q != nil {
			names, ours := decls[q[1]]
			if !ours {
				if !imported[q[1]] && q[1] != "pkg" { // pkg.Func is how the page says what it checks
					t.Errorf("ARCHITECTURE.md names %s, of a package %s that no file of the module declares or imports", span, q[1])
				}
				continue // another module's package: mcp.Server, os.Root
			}
			name := q[2]
			if q[3] != "" {
				name += "." + q[3]
			}
			if !names[name] {
				t.Errorf("ARCHITECTURE.md names %s, which package %s does not declare", span, q[1])
			}
			continue
		}
		if strings.Contains(span, "/") && !strings.ContainsAny(span, " *$~") && !strings.HasPrefix(span, "/") {
			top, _, _ := strings.Cut(span, "/")
			if fi, err := os.Stat(filepath.Join(harness.RepoRoot, top)); err != nil || !fi.IsDir() {
				continue // not a path into the repository: github.com/…
			}
			if _, err := os.Stat(filepath.Join(harness.RepoRoot, filepath.FromSlash(span))); err != nil {
				t.Errorf("ARCHITECTURE.md names %s, which does not exist", span)
			}
		}
	}
}

// moduleDeclarations maps each package name of this module (main
// packages and tests left out) to what its files declare at the top
// level: functions, types, variables and constants by name, methods and
// struct fields as Type.Name.
func moduleDeclarations(t *testing.T) map[string]map[string]bool {
	t.Helper()
	decls := map[string]map[string]bool{}
	for _, folder := range goFolders(t) {
		dir := filepath.Join(harness.RepoRoot, filepath.FromSlash(folder))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if file.Name.Name == "main" {
				continue
			}
			names := decls[file.Name.Name]
			if names == nil {
				names = map[string]bool{}
				decls[file.Name.Name] = names
			}
			addDeclarations(names, file)
		}
	}
	return decls
}

func addDeclarations(names map[string]bool, file *ast.File) {
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				names[d.Name.Name] = true
				continue
			}
			if recv := receiverType(d.Recv.List[0].Type); recv != "" {
				names[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								names[s.Name.Name+"."+n.Name] = true
							}
							if len(field.Names) == 0 {
								// An embedded type's methods are the
								// outer type's too; its name is enough
								// to tell a reader where to look.
								names[s.Name.Name+"."+receiverType(field.Type)] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
}

// receiverType is the type's name in a receiver or an embedded field:
// T, *T, T[P] and *T[P] are all T.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		case *ast.SelectorExpr:
			return x.Sel.Name
		default:
			return ""
		}
	}
}

// TestReadmeIsTheWayIn: the README stays short enough to read first; the
// reference lives in docs/.
func TestReadmeIsTheWayIn(t *testing.T) {
	t.Parallel()
	readme := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "README.md"))
	if len(readme) > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over its budget of %d: move reference text to docs/ and link it", len(readme), readmeMaxBytes)
	}
	for _, first := range []string{"go run . stat README.md", "go test ./..."} {
		if !strings.Contains(readme, "\n"+first) {
			t.Errorf("README.md lost its command %q", first)
		}
	}
}

// mdLink is an inline markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link in README.md, ARCHITECTURE.md
// and the pages of docs/ (docPages) names a file of the repository, and a #fragment into a
// markdown file names one of its headings as GitHub anchors them.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	files := append([]string{"README.md", "ARCHITECTURE.md"}, relAll(t, docPages(t))...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		a := headingAnchors(harness.ReadFile(t, filepath.Join(harness.RepoRoot, filepath.FromSlash(rel))))
		anchors[rel] = a
		return a
	}
	checked := 0
	for _, file := range files {
		text := withoutCode(harness.ReadFile(t, filepath.Join(harness.RepoRoot, file)))
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			name, fragment, _ := strings.Cut(target, "#")
			rel := file
			if name != "" {
				rel = path.Clean(path.Join(path.Dir(file), name))
				if strings.HasPrefix(rel, "../") {
					t.Errorf("%s: link %s leaves the repository", file, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(harness.RepoRoot, filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s: link %s: no file %s", file, target, rel)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(rel, ".md") && !anchorsOf(rel)[fragment] {
				t.Errorf("%s: link %s: %s has no heading #%s", file, target, rel, fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link pattern no longer matches")
	}
}

func relAll(t *testing.T, paths []string) []string {
	t.Helper()
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rel, err := filepath.Rel(harness.RepoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// withoutCode blanks fenced code blocks and code spans, where brackets
// and parentheses are code, not links.
func withoutCode(text string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(codeSpan.ReplaceAllString(line, "``"))
		b.WriteString("\n")
	}
	return b.String()
}

// headingAnchors are the anchors GitHub gives a file's headings: the
// text lower-cased, code marks and punctuation dropped, spaces as
// hyphens, a repeated anchor numbered -1, -2, ….
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		for n, a := 1, anchor; ; n++ {
			if !anchors[a] {
				anchors[a] = true
				break
			}
			a = anchor + "-" + strconv.Itoa(n)
		}
	}
	return anchors
}

// fileName is a file named in prose: a name with one of the extensions
// the repository's files have, with or without folders before it.
var fileName = regexp.MustCompile(`[A-Za-z0-9_.-]*[A-Za-z0-9_-](?:/[A-Za-z0-9_.-]+)*\.(?:go|sh|md|yaml|json|toml|txtar|py)\b`)

// TestArchitectureNamesFiles: a file ARCHITECTURE.md names, in
// backticks or not (a command line in backticks aside), exists: a path
// from the root as given, a bare name in the folder of the package row it
// is in, or elsewhere anywhere in the checkout. A file split or renamed
// leaves no stale name behind (the tests it names are
// TestDocsNameTestsThatExist's).
func TestArchitectureNamesFiles(t *testing.T) {
	t.Parallel()
	doc := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "ARCHITECTURE.md"))
	files := checkoutFiles(t)
	bases := map[string]bool{}
	for _, f := range files {
		bases[path.Base(f)] = true
	}
	for _, line := range strings.Split(doc, "\n") {
		row := ""
		if m := tableFolder.FindStringSubmatch(line); m != nil {
			row = m[1]
		}
		// A command line in backticks names its arguments, not files.
		prose := codeSpan.ReplaceAllStringFunc(line, func(span string) string {
			if strings.Contains(span, " ") {
				return ""
			}
			return span
		})
		for _, name := range fileName.FindAllString(prose, -1) {
			switch {
			case strings.Contains(name, "/"):
				top, _, _ := strings.Cut(name, "/")
				if fi, err := os.Stat(filepath.Join(harness.RepoRoot, top)); err != nil || !fi.IsDir() {
					continue // not a path into the repository
				}
				if !slices.Contains(files, name) && !isDir(filepath.Join(harness.RepoRoot, filepath.FromSlash(name))) {
					t.Errorf("ARCHITECTURE.md names %s, which does not exist", name)
				}
			case row != "" && row != ".":
				if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, row+"/") && path.Base(f) == name }) {
					t.Errorf("ARCHITECTURE.md's row for %s names %s, which is no file of that folder", row, name)
				}
			case !bases[name]:
				t.Errorf("ARCHITECTURE.md names %s, which is no file of the checkout", name)
			}
		}
	}
}

// checkoutFiles lists every file of the checkout, tracked or new,
// slash-separated and relative to the root.
func checkoutFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", harness.RepoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("the files checked are the checkout's, and git cannot list it here: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// importedNames are the names under which the module's files, tests
// included, use the packages they import: the last element of the path,
// or the name it is imported as.
func importedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range checkoutGoFiles(t) {
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(harness.RepoRoot, filepath.FromSlash(f)), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = true
		}
	}
	return names
}

// docPages are the markdown pages of docs/ and of the design's sections
// in docs/design/, as absolute paths.
func docPages(t *testing.T) []string {
	t.Helper()
	var pages []string
	for _, glob := range []string{"docs/*.md", "docs/design/*.md"} {
		found, err := filepath.Glob(filepath.Join(harness.RepoRoot, filepath.FromSlash(glob)))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, found...)
	}
	if len(pages) < 2 {
		t.Fatal("no pages found in docs/ and docs/design/: the globs no longer match")
	}
	return pages
}
