//go:build unix

package fsops

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/closest"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// editOpts are EditOptions with a diff that is never omitted for size.
func editOpts(edits ...Replacement) EditOptions {
	return EditOptions{Edits: edits, Diff: diff.Options{Context: 3, BasisMaxBytes: 1 << 20}}
}

func fsErr(t *testing.T, err error) *fserr.Error {
	t.Helper()
	var e *fserr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *fserr.Error", err, err)
	}
	return e
}

func TestCheckEdits(t *testing.T) {
	tests := []struct {
		name  string
		edits []Replacement
		msg   string // "" when valid
	}{
		{"none", nil, "edit: no edits given"},
		{"empty list", []Replacement{}, "edit: no edits given"},
		{"empty old", []Replacement{{Old: "", New: "x"}}, "edit: old text is empty"},
		{"old equals new", []Replacement{{Old: "a", New: "a"}}, "edit: old and new text are the same"},
		{"old equals new, replace all", []Replacement{{Old: "a", New: "a", ReplaceAll: true}}, "edit: old and new text are the same"},
		{"second of two names its number", []Replacement{{Old: "a", New: "b"}, {Old: "", New: "c"}}, "edit: old text is empty (edit 2)"},
		{"third of three", []Replacement{{Old: "a", New: "b"}, {Old: "b", New: "c"}, {Old: "c", New: "c"}}, "edit: old and new text are the same (edit 3)"},
		{"valid", []Replacement{{Old: "a", New: "b"}}, ""},
		{"empty new deletes", []Replacement{{Old: "a", New: ""}}, ""},
		{"white space only", []Replacement{{Old: " ", New: "\t"}}, ""},
		{"several", []Replacement{{Old: "a", New: "b"}, {Old: "b", New: "a", ReplaceAll: true}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkEdits(tc.edits)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("checkEdits = %v, want nil", err)
				}
				return
			}
			if fserr.CodeOf(err) != fserr.InvalidArgument {
				t.Fatalf("code %s (%v), want %s", fserr.CodeOf(err), err, fserr.InvalidArgument)
			}
			if err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err.Error(), tc.msg)
			}
		})
	}
}

func TestPlanEdit(t *testing.T) {
	content := []byte("package main\n\nfunc retries() int {\n\treturn 3\n}\n")
	want := []byte("package main\n\nfunc retries() int {\n\treturn 5\n}\n")
	res, sp, err := planEdit("main.go", content, editOpts(Replacement{Old: "return 3", New: "return 5"}))
	if err != nil {
		t.Fatal(err)
	}
	wantRes := &EditResult{
		Replacements:   1,
		SHA256:         sumHex(want),
		PreviousSHA256: sumHex(content),
		LineEndings:    "lf",
		Encoding:       "utf-8",
		Diff: diff.Result{Added: 1, Removed: 1,
			Text: "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func retries() int {\n-\treturn 3\n+\treturn 5\n }\n"},
	}
	if !reflect.DeepEqual(res, wantRes) {
		t.Errorf("planEdit\n got %+v\nwant %+v", res, wantRes)
	}
	if got := sp.bytes(); string(got) != string(want) {
		t.Errorf("splice writes %q, want %q", got, want)
	}
	if string(content) != "package main\n\nfunc retries() int {\n\treturn 3\n}\n" {
		t.Errorf("planEdit changed its input: %q", content)
	}
}

func TestPlanEditResults(t *testing.T) {
	tests := []struct {
		name         string
		content      string
		edits        []Replacement
		want         string
		replacements int
		lineEndings  string
	}{
		{
			name: "replace all", content: "v1 v1\nv1\n",
			edits: []Replacement{{Old: "v1", New: "v2", ReplaceAll: true}},
			want:  "v2 v2\nv2\n", replacements: 3, lineEndings: "lf",
		},
		{
			name: "replace all with one match", content: "v1\n",
			edits: []Replacement{{Old: "v1", New: "v2", ReplaceAll: true}},
			want:  "v2\n", replacements: 1, lineEndings: "lf",
		},
		{
			name: "in order, the second sees the first", content: "a := old()\n",
			edits: []Replacement{{Old: "old()", New: "renamed()"}, {Old: "a := renamed()", New: "b := renamed()"}},
			want:  "b := renamed()\n", replacements: 2, lineEndings: "lf",
		},
		{
			name: "in order, the first makes the second unique", content: "x\nx\n",
			edits: []Replacement{{Old: "x\nx", New: "x\ny"}, {Old: "x", New: "z"}},
			want:  "z\ny\n", replacements: 2, lineEndings: "lf",
		},
		{
			name: "crlf typed with lf", content: "a\r\nb\r\n",
			edits: []Replacement{{Old: "a\nb", New: "a\nc\nb"}},
			want:  "a\r\nc\r\nb\r\n", replacements: 1, lineEndings: "crlf",
		},
		{
			name: "bom", content: "\uFEFFa\nb\n",
			edits: []Replacement{{Old: "a", New: "A"}},
			want:  "\uFEFFA\nb\n", replacements: 1, lineEndings: "lf",
		},
		{
			name: "no final newline", content: "a\nb",
			edits: []Replacement{{Old: "b", New: "B"}},
			want:  "a\nB", replacements: 1, lineEndings: "lf",
		},
		{
			name: "no line break", content: "abc",
			edits: []Replacement{{Old: "b", New: "B"}},
			want:  "aBc", replacements: 1, lineEndings: "none",
		},
		{
			name: "delete everything", content: "abc",
			edits: []Replacement{{Old: "abc", New: ""}},
			want:  "", replacements: 1, lineEndings: "none",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, sp, err := planEdit("f", []byte(tc.content), editOpts(tc.edits...))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(sp.bytes()); got != tc.want {
				t.Errorf("result %q, want %q", got, tc.want)
			}
			if res.Replacements != tc.replacements {
				t.Errorf("replacements %d, want %d", res.Replacements, tc.replacements)
			}
			if res.LineEndings != tc.lineEndings {
				t.Errorf("line_endings %q, want %q", res.LineEndings, tc.lineEndings)
			}
			if res.SHA256 != sumHex([]byte(tc.want)) || res.PreviousSHA256 != sumHex([]byte(tc.content)) {
				t.Errorf("hashes %s, %s do not match the contents", res.SHA256, res.PreviousSHA256)
			}
			if want := diff.Unified("f", []byte(tc.content), []byte(tc.want), editOpts().Diff); !reflect.DeepEqual(res.Diff, want) {
				t.Errorf("diff %+v, want %+v", res.Diff, want)
			}
		})
	}
}

// TestPlanEditEncodings edits files in every encoding: the text is typed
// in UTF-8, the file keeps its encoding, and only the edited bytes change.
func TestPlanEditEncodings(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		edits         []Replacement
		want, enc     string
		line          int // the line of the first match, for FS_EDIT_AMBIGUOUS-style counting
	}{
		{name: "windows-1252", content: "caf\xe9\n\x80 one\ntwo\n", edits: []Replacement{{Old: "€ one", New: "€ ONE ü"}},
			want: "caf\xe9\n\x80 ONE \xfc\ntwo\n", enc: "windows-1252"},
		{name: "latin-1", content: "\x81\nna\xefve\n", edits: []Replacement{{Old: "naïve", New: "NAÏVE"}},
			want: "\x81\nNA\xcfVE\n", enc: "latin-1"},
		{name: "utf-16le crlf", content: "\xff\xfea\x00\r\x00\n\x00b\x00\r\x00\n\x00", edits: []Replacement{{Old: "b\n", New: "c\nd\n"}},
			want: "\xff\xfea\x00\r\x00\n\x00c\x00\r\x00\n\x00d\x00\r\x00\n\x00", enc: "utf-16le"},
		{name: "utf-16be astral", content: "\xfe\xff\x00a\x00\n", edits: []Replacement{{Old: "a", New: "😀"}},
			want: "\xfe\xff\xd8\x3d\xde\x00\x00\n", enc: "utf-16be"},
		{name: "utf-16le unaligned bytes are no match", content: "\xff\xfe\x00\x01\x01\x00\x01\x01", edits: []Replacement{{Old: "ā", New: "x"}},
			want: "\xff\xfe\x00\x01\x01\x00x\x00", enc: "utf-16le"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, sp, err := planEdit("f", []byte(tc.content), editOpts(tc.edits...))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(sp.bytes()); got != tc.want {
				t.Errorf("edited = %q, want %q", got, tc.want)
			}
			if res.Encoding != tc.enc {
				t.Errorf("encoding %s, want %s", res.Encoding, tc.enc)
			}
			if res.Diff.Added == 0 || !utf8.ValidString(res.Diff.Text) {
				t.Errorf("diff %+v: want a UTF-8 diff of the text", res.Diff)
			}
		})
	}
}

func TestPlanEditErrors(t *testing.T) {
	content := "func f() {\n\tx := 1\n}\nfunc g() {\n\tx := 1\n\tx := 1\n}\n"
	tests := []struct {
		name    string
		content string
		opt     EditOptions
		code    fserr.Code
		msg     string
		detail  any
		hint    string
	}{
		{
			name: "no match", content: content,
			opt:    editOpts(Replacement{Old: "y := 2", New: "y := 3"}),
			code:   fserr.EditNoMatch,
			msg:    "edit: f.go: old text not found",
			detail: NoMatchDetail{Edit: 1},
			hint:   "read the file and copy the text exactly, white space included; nothing was changed",
		},
		{
			name: "no match, with replace all", content: content,
			opt:    editOpts(Replacement{Old: "y := 2", New: "y := 3", ReplaceAll: true}),
			code:   fserr.EditNoMatch,
			msg:    "edit: f.go: old text not found",
			detail: NoMatchDetail{Edit: 1},
		},
		{
			name: "no match, close", content: content,
			opt:  editOpts(Replacement{Old: "func f() {\n    x := 1\n}", New: "func f() {}"}),
			code: fserr.EditNoMatch,
			msg:  "edit: f.go: old text not found; lines 1-3 are close: indentation: the file uses tabs, old uses spaces",
			detail: NoMatchDetail{Edit: 1, Closest: &closest.Region{StartLine: 1, EndLine: 3,
				Differences: []string{"indentation: the file uses tabs, old uses spaces"},
				Text:        "func f() {\n\tx := 1\n}"}},
			hint: "copy detail.closest.text exactly into old; nothing was changed",
		},
		{
			name: "ambiguous", content: content,
			opt:    editOpts(Replacement{Old: "x := 1", New: "x := 2"}),
			code:   fserr.EditAmbiguous,
			msg:    "edit: f.go: 3 matches for old text (lines 2, 5, 6)",
			detail: AmbiguousDetail{Edit: 1, Count: 3, Lines: []int{2, 5, 6}, Matches: []AmbiguousMatch{{2, "\tx := 1"}, {5, "\tx := 1"}, {6, "\tx := 1"}}},
			hint:   "add surrounding lines to old until it is unique, pick one match with --occurrence N or --line N, or pass --replace-all; to change several of them differently, patch applies one diff; nothing was changed",
		},
		{
			name: "ambiguous on one line", content: "abab\n",
			opt:    editOpts(Replacement{Old: "ab", New: "x"}),
			code:   fserr.EditAmbiguous,
			msg:    "edit: f.go: 2 matches for old text (lines 1, 1)",
			detail: AmbiguousDetail{Edit: 1, Count: 2, Lines: []int{1, 1}, Matches: []AmbiguousMatch{{1, "abab"}, {1, "abab"}}},
		},
		{
			name: "ambiguous, crlf typed with lf", content: "a\r\nb\r\nc\r\na\r\nb\r\n",
			opt:    editOpts(Replacement{Old: "a\nb", New: "x"}),
			code:   fserr.EditAmbiguous,
			msg:    "edit: f.go: 2 matches for old text (lines 1, 4)",
			detail: AmbiguousDetail{Edit: 1, Count: 2, Lines: []int{1, 4}, Matches: []AmbiguousMatch{{1, "a"}, {4, "a"}}},
		},
		{
			name: "second edit not found", content: content,
			opt:    editOpts(Replacement{Old: "func f", New: "func h"}, Replacement{Old: "func f", New: "func k"}),
			code:   fserr.EditNoMatch,
			msg:    "edit: f.go: old text not found (edit 2 of 2)",
			detail: NoMatchDetail{Edit: 2},
		},
		{
			// the lines are those of the content the first edit left
			name: "second edit ambiguous after the first", content: "a\nb\nc\n",
			opt:    editOpts(Replacement{Old: "a\n", New: "c\nc\n"}, Replacement{Old: "c", New: "d"}),
			code:   fserr.EditAmbiguous,
			msg:    "edit: f.go: 3 matches for old text (edit 2 of 2) (lines 1, 2, 4)",
			detail: AmbiguousDetail{Edit: 2, Count: 3, Lines: []int{1, 2, 4}, Matches: []AmbiguousMatch{{1, "c"}, {2, "c"}, {4, "c"}}},
		},
		{
			name: "many matches are cut in the message", content: strings.Repeat("x\n", 25),
			opt:    editOpts(Replacement{Old: "x", New: "y"}),
			code:   fserr.EditAmbiguous,
			msg:    "edit: f.go: 25 matches for old text (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, … 5 more)",
			detail: AmbiguousDetail{Edit: 1, Count: 25, Lines: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}, Matches: xMatches(20)},
		},
		{
			name: "binary", content: "a\x00b",
			opt:  editOpts(Replacement{Old: "a", New: "b"}),
			code: fserr.Binary,
			msg:  "edit: f.go: binary content",
			hint: "write replaces a binary file whole",
		},
		{
			// not UTF-8 and no NUL: Windows-1252, which has no arrow
			name: "new text windows-1252 cannot store", content: "a\xe9b\n",
			opt:  editOpts(Replacement{Old: "a", New: "→"}),
			code: fserr.InvalidArgument,
			msg:  `edit: f.go: new text has '→' (U+2192), which windows-1252 cannot store`,
			hint: "the file keeps its encoding; use characters it can store, or write the file whole; nothing was changed",
		},
		{
			name: "new text latin-1 cannot store", content: "a\x81b\n",
			opt:  editOpts(Replacement{Old: "b", New: "B"}, Replacement{Old: "a", New: "€"}),
			code: fserr.InvalidArgument,
			msg:  `edit: f.go: new text has '€' (U+20AC), which latin-1 cannot store (edit 2 of 2)`,
		},
		{
			name: "utf-16 with a lone surrogate", content: "\xff\xfea\x00\x00\xd8",
			opt:  editOpts(Replacement{Old: "a", New: "b"}),
			code: fserr.Binary,
			msg:  "edit: f.go: binary content",
		},
		{
			name: "stale", content: "a\n",
			opt:  EditOptions{Edits: []Replacement{{Old: "a", New: "b"}}, IfMatch: strings.Repeat("0", 64)},
			code: fserr.Stale,
			hint: "redo the change against the current content, whose sha256 is detail.sha256 (pass it as --if-match once you know what changed); nothing was changed",
		},
		{
			// the hash is checked before the match: a stale file says so
			name: "stale before no match", content: "a\n",
			opt:  EditOptions{Edits: []Replacement{{Old: "zzz", New: "b"}}, IfMatch: strings.Repeat("0", 64)},
			code: fserr.Stale,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, sp, err := planEdit("f.go", []byte(tc.content), tc.opt)
			if err == nil {
				t.Fatalf("planEdit = %+v, want %s", res, tc.code)
			}
			if res != nil || sp.content != nil {
				t.Errorf("planEdit returned a result with its error")
			}
			if got := fserr.CodeOf(err); got != tc.code {
				t.Fatalf("code %s (%v), want %s", got, err, tc.code)
			}
			e := fsErr(t, err)
			if tc.msg != "" && e.Msg != tc.msg {
				t.Errorf("message\n got %q\nwant %q", e.Msg, tc.msg)
			}
			if tc.detail != nil && !reflect.DeepEqual(e.Detail, tc.detail) {
				t.Errorf("detail\n got %#v\nwant %#v", e.Detail, tc.detail)
			}
			if tc.hint != "" && e.Hint != tc.hint {
				t.Errorf("hint %q, want %q", e.Hint, tc.hint)
			}
		})
	}
}

func TestPlanEditIfMatch(t *testing.T) {
	content := []byte("a\n")
	for _, h := range []string{sumHex(content), strings.ToUpper(sumHex(content))} {
		opt := editOpts(Replacement{Old: "a", New: "b"})
		opt.IfMatch = h
		res, _, err := planEdit("f", content, opt)
		if err != nil {
			t.Fatalf("if-match %s: %v", h, err)
		}
		if res.PreviousSHA256 != sumHex(content) {
			t.Errorf("previous_sha256 %s", res.PreviousSHA256)
		}
	}
}

func TestPlanEditDiffBasis(t *testing.T) {
	content := []byte(strings.Repeat("line\n", 100) + "end\n")
	opt := editOpts(Replacement{Old: "end", New: "the end"})
	opt.Diff.BasisMaxBytes = int64(len(content)) - 1
	res, sp, err := planEdit("f", content, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diff.Omitted != diff.ReasonBasisTooLarge {
		t.Errorf("diff %+v, want omitted as %s", res.Diff, diff.ReasonBasisTooLarge)
	}
	if res.SHA256 != sumHex(sp.bytes()) {
		t.Errorf("sha256 is not the result's")
	}

	// the new content alone may be the one too large
	opt.Diff.BasisMaxBytes = int64(len(content))
	if res, _, _ = planEdit("f", content, opt); res.Diff.Omitted != diff.ReasonBasisTooLarge {
		t.Errorf("diff %+v, want omitted: the new side is larger than the basis", res.Diff)
	}
	opt.Diff.BasisMaxBytes = int64(len(content)) + 4
	if res, _, _ = planEdit("f", content, opt); res.Diff.Omitted != "" || res.Diff.Added != 1 {
		t.Errorf("diff %+v, want computed", res.Diff)
	}
}

// editFence is a workspace-write fence on a fresh folder, without the
// kernel layer (it would restrict the whole test process).
func editFence(t *testing.T) (*sandbox.Fence, string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.NewFence(policy.Policy{
		Mode: policy.WorkspaceWrite, Cwd: dir, Enforce: policy.EnforceOff,
		MaxMode: policy.DangerFullAccess, Protected: policy.DefaultProtected,
	}), dir
}

func TestEditFIFO(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		name := "edit"
		if dryRun {
			name = "dry run"
		}
		t.Run(name, func(t *testing.T) {
			f, dir := editFence(t)
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip("no fifo:", err)
			}
			target, err := f.Resolve("fifo")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Edit(f, target, EditOptions{Edits: []Replacement{{Old: "a", New: "b"}}, DryRun: dryRun})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("edit of a FIFO succeeded")
				}
				if c := fserr.CodeOf(err); c == fserr.IO {
					t.Errorf("code %s (%v), want a specific one", c, err)
				}
			case <-time.After(20 * time.Second): // a hang guard: an edit that opens a FIFO with no writer waits forever
				// unblock the open so the goroutine ends
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				<-done
				t.Fatal("edit --dry-run of a FIFO with no writer hangs")
			}
		})
	}
}

// xMatches are the first n matches of "x" on lines of their own.
func xMatches(n int) []AmbiguousMatch {
	var out []AmbiguousMatch
	for i := range n {
		out = append(out, AmbiguousMatch{i + 1, "x"})
	}
	return out
}

func TestPlanEditPick(t *testing.T) {
	content := "a\nb a\na\r\na\n"
	tests := []struct {
		name string
		e    Replacement
		want string // "" when the pick is refused
		msg  string
	}{
		{"occurrence 1", Replacement{Old: "a", New: "X", Occurrence: 1}, "X\nb a\na\r\na\n", ""},
		{"occurrence 3", Replacement{Old: "a", New: "X", Occurrence: 3}, "a\nb a\nX\r\na\n", ""},
		{"line 3", Replacement{Old: "a", New: "X", Line: 3}, "a\nb a\nX\r\na\n", ""},
		{"line 4", Replacement{Old: "a", New: "X", Line: 4}, "a\nb a\na\r\nX\n", ""},
		{"occurrence past the end", Replacement{Old: "a", New: "X", Occurrence: 5}, "",
			"edit: f: --occurrence 5 is out of range; old text has 4 matches (lines 1, 2, 3, 4)"},
		{"no match on the line", Replacement{Old: "b", New: "X", Line: 1}, "",
			"edit: f: --line 1: no match starts on that line; old text has 1 match (lines 2)"},
		{"line 2, after another word", Replacement{Old: "a", New: "X", Line: 2}, "a\nb X\na\r\na\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, sp, err := planEdit("f", []byte(content), editOpts(tc.e))
			if tc.msg != "" {
				if fserr.CodeOf(err) != fserr.EditNoMatch || err.Error() != tc.msg {
					t.Fatalf("err = %v (%s), want %s %q", err, fserr.CodeOf(err), fserr.EditNoMatch, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(sp.bytes()); got != tc.want {
				t.Errorf("edited %q, want %q", got, tc.want)
			}
		})
	}
	_, _, err := planEdit("f", []byte("x x\n"), editOpts(Replacement{Old: "x", New: "y", Line: 1}))
	if want := "edit: f: --line 1: 2 matches start on that line (pick one with --occurrence 1 to 2); old text has 2 matches (lines 1, 1)"; err == nil || err.Error() != want {
		t.Errorf("two matches on the line: err = %v, want %q", err, want)
	}
}

func TestLineBreakWarning(t *testing.T) {
	tests := []struct {
		old, new, want string
	}{
		{"a", "b\n", WarnAddsLineBreak},
		{"a\n", "b", WarnRemovesLineBreak},
		{"a\n", "", ""}, // a deletion, line and all
		{"a", "b", ""},
		{"a\n", "b\n", ""},
		{"a\r\n", "b\n", ""},
	}
	for _, tc := range tests {
		if got := lineBreakWarning(Replacement{Old: tc.old, New: tc.new}); got != tc.want {
			t.Errorf("lineBreakWarning(%q, %q) = %q, want %q", tc.old, tc.new, got, tc.want)
		}
	}
}
