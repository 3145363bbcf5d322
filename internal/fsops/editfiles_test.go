//go:build unix

package fsops

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

func TestEditFiles(t *testing.T) {
	f, dir := editFence(t)
	files := map[string]string{"b.txt": "one\n", "a.txt": "one one\n", "c.txt": "two\n", "d.txt": "two\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	targets := func(skip bool, names ...string) []EditTarget {
		var out []EditTarget
		for _, n := range names {
			tg, err := f.Resolve(n)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, EditTarget{Target: tg, SkipNoMatch: skip})
		}
		return out
	}
	unchanged := func() {
		t.Helper()
		for name, content := range files {
			if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != content {
				t.Errorf("%s = %q, want %q unchanged", name, got, content)
			}
		}
	}
	opt := editOpts(Replacement{Old: "one", New: "1", ReplaceAll: true})

	// A file named on its own without the old text fails the whole edit.
	_, err := EditFiles(f, targets(false, "b.txt", "a.txt", "c.txt"), opt)
	if fserr.CodeOf(err) != fserr.EditNoMatch {
		t.Fatalf("err = %v, want %s", err, fserr.EditNoMatch)
	}
	unchanged()
	// --if-match pins one file: refused.
	pinned := opt
	pinned.IfMatch = sumHex([]byte("one\n"))
	if _, err := EditFiles(f, targets(false, "a.txt", "b.txt"), pinned); fserr.CodeOf(err) != fserr.InvalidArgument {
		t.Fatalf("err = %v, want %s", err, fserr.InvalidArgument)
	}
	unchanged()

	// Found by a glob: skipped; a file named twice is edited once; the
	// files come in the order of their paths.
	res, err := EditFiles(f, append(targets(true, "b.txt", "c.txt", "a.txt"), targets(true, "d.txt", "b.txt")...), opt)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range res.Files {
		paths = append(paths, e.Path)
	}
	if want := []string{"a.txt", "b.txt"}; !reflect.DeepEqual(paths, want) || res.Replacements != 3 {
		t.Errorf("files %v (%d replacements), want %v (3)", paths, res.Replacements, want)
	}
	if want := []string{"c.txt", "d.txt"}; !reflect.DeepEqual(res.Skipped, want) {
		t.Errorf("skipped %v, want %v", res.Skipped, want)
	}
	for name, want := range map[string]string{"a.txt": "1 1\n", "b.txt": "1\n", "c.txt": "two\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(files) {
		t.Errorf("%d entries in the folder, want %d: a temp file was left", len(entries), len(files))
	}
}
