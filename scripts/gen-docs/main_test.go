package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
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
