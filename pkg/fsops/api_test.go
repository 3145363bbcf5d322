package fsops_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.txt from go doc -all")

// TestAPI pins the exported surface of this package, with its doc
// comments, to testdata/api.txt (go doc -all), so it changes only on
// purpose: after a change meant to be public, rerun with -update and
// review the file's diff.
func TestAPI(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command for go doc")
	}
	got, err := exec.Command(goBin, "doc", "-all", ".").Output()
	if err != nil {
		t.Fatalf("go doc -all: %v", err)
	}
	golden := filepath.Join("testdata", "api.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the exported surface changed; if on purpose, go test -run TestAPI -update and review %s.\ngo doc -all now:\n%s", golden, got)
	}
}
