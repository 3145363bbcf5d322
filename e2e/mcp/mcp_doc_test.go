package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// docs/mcp.md's table of differences from the official server (issue
// 39): every row names the tests that pin it, and each test named exists.

var (
	testFuncDecl = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	testNameSpan = regexp.MustCompile("`(Test\\w+)`")
)

// differencesTableFaults checks the table of differences in doc (the
// table whose header has a "test" column) against the test functions
// declared: each row must name one test at least, in backticks, in that
// column, and each must be declared. It returns the rows read and what
// is wrong.
func differencesTableFaults(doc string, declared map[string]bool) (rows int, faults []string) {
	inTable, col := false, -1
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if !inTable {
			inTable, col = true, -1
			for i, c := range cells {
				if strings.TrimSpace(c) == "test" {
					col = i
				}
			}
			continue
		}
		if col < 0 || strings.HasPrefix(line, "| ---") {
			continue
		}
		rows++
		if len(cells) != col+1 {
			faults = append(faults, fmt.Sprintf("a row with %d cells, not %d: %s", len(cells), col+1, line))
			continue
		}
		names := testNameSpan.FindAllStringSubmatch(cells[col], -1)
		if len(names) == 0 {
			faults = append(faults, "a row names no test: "+line)
		}
		for _, n := range names {
			if !declared[n[1]] {
				faults = append(faults, n[1]+" is named but not declared")
			}
		}
	}
	return rows, faults
}

// declaredTests are the Test functions of the checkout's _test.go files.
func declaredTests(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("git", "-C", harness.RepoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*_test.go").Output()
	if err != nil {
		t.Skipf("the tests are the checkout's, and git cannot list it here: %v", err)
	}
	declared := map[string]bool{}
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		src, err := os.ReadFile(filepath.Join(harness.RepoRoot, filepath.FromSlash(f)))
		if err != nil {
			continue // listed, then removed
		}
		for _, m := range testFuncDecl.FindAllSubmatch(src, -1) {
			declared[string(m[1])] = true
		}
	}
	return declared
}

// TestMcpDifferencesTableNamesTests: docs/mcp.md's table of differences
// names, in each row, tests that exist; and the check itself catches a
// test that does not, and a row that names none.
func TestMcpDifferencesTableNamesTests(t *testing.T) {
	declared := declaredTests(t)
	doc := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "docs", "mcp.md"))
	rows, faults := differencesTableFaults(doc, declared)
	if rows < 20 {
		t.Errorf("docs/mcp.md's table of differences has %d rows: is its header's last column still \"test\"?", rows)
	}
	for _, f := range faults {
		t.Errorf("docs/mcp.md: %s", f)
	}

	planted := "| difference | official | dsh | why | test |\n| --- | --- | --- | --- | --- |\n" +
		"| a | b | c | d | `TestMcpDropIn` |\n| e | f | g | h | `TestMcpNoSuchTest` |\n| i | j | k | l | none |\n"
	rows, faults = differencesTableFaults(planted, declared)
	if rows != 3 || len(faults) != 2 || !strings.Contains(faults[0], "TestMcpNoSuchTest") || !strings.Contains(faults[1], "names no test") {
		t.Errorf("planted table: %d rows, faults %q", rows, faults)
	}
}
