package patch

import (
	"errors"
	"strings"
	"testing"
)

// applyOne parses p, which must change one file, and applies it to text.
func applyOne(t *testing.T, p, text string) (string, error) {
	t.Helper()
	parsed, err := Parse([]byte(p))
	if err != nil {
		return "", err
	}
	if len(parsed.Files) != 1 {
		t.Fatalf("%d files, want 1", len(parsed.Files))
	}
	return Apply(parsed.Format, parsed.Files[0], text)
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name, patch, before, after string
	}{
		{"unified at its line", "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n", "a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n"},
		{"unified with an offset", "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n", "x\ny\na\nb\nc\nd\ne\n", "x\ny\na\nb\nC\nd\ne\n"},
		{"unified two hunks, the second shifted by the first", "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+a2\n b\n@@ -4,2 +5,2 @@\n d\n-e\n+E\n", "a\nb\nc\nd\ne\n", "a\na2\nb\nc\nd\nE\n"},
		{"unified keeps CRLF", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\r\nb\r\n", "a\r\nB\r\n"},
		{"unified of a CRLF file keeps its CR", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n", "a\r\nb\r\n", "a\r\nB\r\n"},
		{"unified adds a final newline", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", "a\nb", "a\nb\n"},
		{"unified removes the final newline", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n", "a\nb\n", "a\nb"},
		{"unified new file", "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n", "", "a\nb\n"},
		{"unified pure insertion at the top", "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+top\n", "a\n", "top\na\n"},
		{"unified empty context line without its space", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-c\n+C\n", "a\n\nc\n", "a\n\nC\n"},
		{"apply_patch in order", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n@@\n-b\n+B2\n*** End Patch\n", "a\nb\nx\nb\n", "a\nB\nx\nB2\n"},
		{"apply_patch @@ seeks its line first", "*** Begin Patch\n*** Update File: f\n@@ func two() {\n-\treturn 1\n+\treturn 2\n*** End Patch\n", "func one() {\n\treturn 1\n}\nfunc two() {\n\treturn 1\n}\n", "func one() {\n\treturn 1\n}\nfunc two() {\n\treturn 2\n}\n"},
		{"apply_patch End of File anchors at the end", "*** Begin Patch\n*** Update File: f\n@@\n-x\n+y\n*** End of File\n*** End Patch\n", "x\nm\nx\n", "x\nm\ny\n"},
		{"apply_patch first hunk without @@", "*** Begin Patch\n*** Update File: f\n a\n-b\n+c\n*** End Patch\n", "a\nb\n", "a\nc\n"},
		{"apply_patch keeps CRLF", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n+C\n*** End Patch\n", "a\r\nb\r\n", "a\r\nB\r\nC\r\n"},
		{"apply_patch keeps no final newline", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n*** End Patch\n", "a\nb", "a\nB"},
		{"apply_patch appends after a last line without newline", "*** Begin Patch\n*** Update File: f\n@@\n b\n+c\n*** End Patch\n", "a\nb", "a\nb\nc"},
		{"apply_patch insertion after @@ line", "*** Begin Patch\n*** Update File: f\n@@ b\n+b2\n*** End Patch\n", "a\nb\nc\n", "a\nb\nb2\nc\n"},
		{"a patch written with CRLF keeps an LF file LF", "*** Begin Patch\r\n*** Update File: f\r\n@@\r\n a\r\n-b\r\n+B\r\n*** End Patch\r\n", "a\nb\n", "a\nB\n"},
		{"apply_patch @@ with only a space seeks nothing", "*** Begin Patch\n*** Update File: f\n@@ \n-b\n+B\n*** End Patch\n", "a\nb\n", "a\nB\n"},
		{"apply_patch add", "*** Begin Patch\n*** Add File: f\n+a\n+b\n*** End Patch\n", "", "a\nb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyOne(t, tc.patch, tc.before)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.after {
				t.Errorf("got %q, want %q", got, tc.after)
			}
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, patch, before string
		applied             bool
		reason              string
	}{
		{"unified context differs", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nc\n", false, ""},
		{"unified no fuzz: one context line differs", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a\nb\nX\n", false, ""},
		{"unified trailing space is a difference", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a \nb\n", false, ""},
		{"unified no trailing context must match at the end", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nb\nc\n", false, "no trailing context, so it must end at the end of the file"},
		{"unified already applied", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a\nB\nc\n", true, ""},
		{"apply_patch @@ line missing", "*** Begin Patch\n*** Update File: f\n@@ nothere\n-a\n+b\n*** End Patch\n", "a\n", false, ""},
		{"apply_patch second hunk before the first", "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch\n", "a\nb\n", false, ""},
		{"apply_patch End of File not at the end", "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End of File\n*** End Patch\n", "a\nc\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := applyOne(t, tc.patch, tc.before)
			var he *HunkError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want a HunkError", err)
			}
			if !strings.Contains(he.Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", he.Reason, tc.reason)
			}
			if he.AlreadyApplied != tc.applied {
				t.Errorf("AlreadyApplied = %v, want %v", he.AlreadyApplied, tc.applied)
			}
		})
	}
}

func TestParse(t *testing.T) {
	p, err := Parse([]byte("From abc\nSubject: x\n\ndiff --git a/old.go b/new.go\nsimilarity index 90%\nrename from old.go\nrename to new.go\n--- a/old.go\n+++ b/new.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n" +
		"diff --git a/empty b/empty\nnew file mode 100755\nindex 0000000..e69de29\n" +
		"diff --git a/pure b/moved\nsimilarity index 100%\nrename from pure\nrename to moved\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Files {
		got = append(got, string(f.Kind)+" "+f.Path+">"+f.MoveTo)
	}
	want := []string{"update old.go>new.go", "delete gone>", "add empty>", "update pure>moved"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("files %q, want %q", got, want)
	}
	if p.Files[2].Mode != 0o755 {
		t.Errorf("mode %o, want 755", p.Files[2].Mode)
	}

	a, err := Parse([]byte("*** Begin Patch\n*** Add File: n\n+x\n*** Delete File: d\n*** Update File: u\n*** Move to: v\n@@\n-a\n+b\n*** End Patch\n"))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range a.Files {
		got = append(got, string(f.Kind)+" "+f.Path+">"+f.MoveTo)
	}
	want = []string{"add n>", "delete d>", "update u>v"}
	if a.Format != ApplyPatch || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s files %q, want %q", a.Format, got, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, patch, want string }{
		{"empty", "", "no file"},
		{"no end", "*** Begin Patch\n*** Delete File: x\n", "does not end"},
		{"update without hunk", "*** Begin Patch\n*** Update File: x\n*** End Patch\n", "no hunk"},
		{"bad hunk line", "*** Begin Patch\n*** Update File: x\n@@\nfoo\n*** End Patch\n", "starts with"},
		{"short hunk", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n", "ends early"},
		{"bad header", "--- a/f\n+++ b/f\n@@ -x +1 @@\n a\n", "bad hunk header"},
		{"binary", "diff --git a/f b/f\nGIT binary patch\n", "binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.patch))
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Error(), tc.want) {
				t.Errorf("err = %v, want a SyntaxError saying %q", err, tc.want)
			}
		})
	}
}

// FuzzApply checks the invariants of any patch on any text: Parse and
// Apply never panic, a failure is a SyntaxError or a HunkError, and a
// unified patch that applies leaves the text's lines outside its hunks
// as they were (it never drops or adds what it does not say).
func FuzzApply(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nb\n")
	f.Add("*** Begin Patch\n*** Update File: f\n@@ x\n-a\n+b\n*** End of File\n*** End Patch\n", "x\na\n")
	f.Add("--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+top\n\\ No newline at end of file\n", "")
	f.Add("*** Begin Patch\n*** Update File: f\n\n-\n+\r\n*** End Patch\n", "\r\n\n")
	f.Fuzz(func(t *testing.T, p, text string) {
		parsed, err := Parse([]byte(p))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: %v is not a SyntaxError", err)
			}
			return
		}
		for _, file := range parsed.Files {
			out, err := Apply(parsed.Format, file, text)
			if err != nil {
				var he *HunkError
				if !errors.As(err, &he) {
					t.Fatalf("Apply: %v is not a HunkError", err)
				}
				continue
			}
			if file.Kind == Update && len(file.Hunks) == 0 && out != text {
				t.Fatalf("no hunk changed %q into %q", text, out)
			}
		}
	})
}
