package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
)

// thLine is the man page title line, which carries the generation date.
var thLine = regexp.MustCompile(`(?m)^\.TH .*$`)

// TestManPagesUpToDate regenerates the man pages and compares them with
// docs/man: a changed flag or help text without `go run ./scripts/gen-docs`
// fails here.
func TestManPagesUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "docs", "man")
	fresh, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	old, _ := filepath.Glob(filepath.Join(committed, "*.1"))
	if len(fresh) != len(old) {
		t.Fatalf("docs/man has %d pages, the commands make %d: run go run ./scripts/gen-docs", len(old), len(fresh))
	}
	for _, f := range fresh {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(committed, filepath.Base(f)))
		if err != nil {
			t.Fatalf("docs/man lacks %s: run go run ./scripts/gen-docs", filepath.Base(f))
		}
		if thLine.ReplaceAllString(string(got), "") != thLine.ReplaceAllString(string(want), "") {
			t.Errorf("docs/man/%s is stale: run go run ./scripts/gen-docs", filepath.Base(f))
		}
	}
}

// TestManPagesSections: every page has an example, ENVIRONMENT naming
// every DSH_FS_* variable, FILES naming the config files, and EXIT
// STATUS.
func TestManPagesSections(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) == 0 {
		t.Fatal("no pages")
	}
	want := []string{".SH EXAMPLE", ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS",
		"/etc/dsh-fs/config.yaml", "/etc/dsh-fs/requirements.yaml", "~/.config/dsh-fs/config.yaml"}
	for _, v := range config.Environment() {
		want = append(want, `\fB`+v.Name+`\fP`)
	}
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %s", filepath.Base(p), w)
			}
		}
	}
}
