package search

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFindLines pins what --lines counts and what it skips, with its
// reason, and --sort lines' order: counted files by count, largest
// first, ties by path, and every file without a count after them.
func TestFindLines(t *testing.T) {
	f, dir := searchFence(t)
	files := map[string]string{
		"one.txt":      "a\n",
		"no-final.txt": "a\nb",
		"three.txt":    "a\n\nc\n",
		"empty.txt":    "",
		"bin.dat":      "a\x00b\n",
		"utf16.txt":    "\xff\xfea\x00\n\x00",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	target, err := f.Resolve(".")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Find(f, target, FindOptions{Glob: "*", Limit: 100, MaxBytes: 1 << 20, Sort: SortLines})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		path    string
		lines   int
		skipped string
	}
	var have []got
	for _, e := range res.Entries {
		g := got{path: e.Path, lines: -1, skipped: e.LinesSkipped}
		if e.Lines != nil {
			g.lines = *e.Lines
		}
		have = append(have, g)
	}
	want := []got{
		{"three.txt", 3, ""},
		{"no-final.txt", 2, ""},
		{"one.txt", 1, ""},
		{"empty.txt", 0, ""},
		{"bin.dat", -1, LinesBinary},
		{"d", -1, LinesNotFile},
		{"utf16.txt", -1, LinesBinary},
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("find --sort lines\n got %v\nwant %v", have, want)
	}
	// --reverse turns the counted order round; uncounted stay last.
	res, err = Find(f, target, FindOptions{Glob: "*.txt", Limit: 2, MaxBytes: 1 << 20, Sort: SortLines, Reverse: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 || res.Entries[0].Path != "empty.txt" || res.Entries[1].Path != "one.txt" || !res.Truncated || res.LeftOut != 3 {
		t.Errorf("reversed: %+v", res)
	}
}
