package repo

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

var updateAPI = flag.Bool("update-api", false, "rewrite each public package's testdata/api.txt from go doc -all")

// TestPublicAPIOnPurpose pins the exported surface of every public
// package (each folder of pkg/ but pkg/internal), with its doc comments,
// to its testdata/api.txt (go doc -all), so it changes only on purpose:
// after a change meant to be public, rerun with -update-api and review
// the files' diff.
func TestPublicAPIOnPurpose(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command for go doc")
	}
	var public []string
	for _, folder := range goFolders(t) {
		if path.Dir(folder) == "pkg" && folder != "pkg/internal" {
			public = append(public, folder)
		}
	}
	if len(public) == 0 {
		t.Fatal("no public package found under pkg/")
	}
	for _, folder := range public {
		dir := filepath.Join(harness.RepoRoot, filepath.FromSlash(folder))
		cmd := exec.Command(goBin, "doc", "-all", ".")
		cmd.Dir = dir
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: go doc -all: %v", folder, err)
		}
		golden := filepath.Join(dir, "testdata", "api.txt")
		if *updateAPI {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
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
			t.Errorf("%s: the exported surface changed; if on purpose, go test ./e2e/repo -run TestPublicAPIOnPurpose -update-api and review %s.\ngo doc -all now:\n%s", folder, golden, got)
		}
	}
}
