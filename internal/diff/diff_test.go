package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/text"
)

// gnuDiff is the reference implementation the hunks are compared with.
const gnuDiff = "/usr/bin/diff"

// bigFile is about 1 MiB of numbered lines, like a large source file.
func bigFile(lines int) []byte {
	var b bytes.Buffer
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %05d: the quick brown fox jumps over the dog\n", i)
	}
	return b.Bytes()
}

// replaceLine returns a copy of content with its 1-based line n replaced.
func replaceLine(content []byte, n int, with string) []byte {
	lines := strings.SplitAfter(string(content), "\n")
	lines[n-1] = with
	return []byte(strings.Join(lines, ""))
}

// numbered returns lines "1\n" … "n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

var (
	big        = bigFile(20000)
	bigChanged = replaceLine(big, 10000, "line 10000: CHANGED\n")
)

// unifiedCase is one comparison; want is the whole text, headers included,
// for name "x". Every case is also checked against GNU diff and by
// applying the diff to old.
type unifiedCase struct {
	name           string
	old, new       string
	ctx            int
	want           string
	added, removed int
}

var unifiedCases = []unifiedCase{
	{name: "identical", old: "a\nb\n", new: "a\nb\n", ctx: 3, want: ""},
	{name: "both empty", old: "", new: "", ctx: 3, want: ""},
	{
		name: "append line", old: "a\nb\n", new: "a\nb\nc\n", ctx: 3, added: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
	},
	{
		name: "delete line", old: "a\nb\nc\n", new: "a\nc\n", ctx: 3, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,3 +1,2 @@\n a\n-b\n c\n",
	},
	{
		name: "change middle of big file", old: string(big), new: string(bigChanged), ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -9997,7 +9997,7 @@\n" +
			" line 09997: the quick brown fox jumps over the dog\n" +
			" line 09998: the quick brown fox jumps over the dog\n" +
			" line 09999: the quick brown fox jumps over the dog\n" +
			"-line 10000: the quick brown fox jumps over the dog\n" +
			"+line 10000: CHANGED\n" +
			" line 10001: the quick brown fox jumps over the dog\n" +
			" line 10002: the quick brown fox jumps over the dog\n" +
			" line 10003: the quick brown fox jumps over the dog\n",
	},
	{
		name: "change first line", old: "a\nb\nc\nd\ne\n", new: "A\nb\nc\nd\ne\n", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n",
	},
	{
		name: "insert at start", old: "a\nb\n", new: "z\na\nb\n", ctx: 0, added: 1,
		want: "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+z\n",
	},
	{
		name: "old lacks final newline", old: "a\nb", new: "a\nb\n", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
	},
	{
		name: "new lacks final newline", old: "a\nb\n", new: "a\nb", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
	},
	{
		name: "both lack final newline, last line changed", old: "a\nb", new: "a\nc", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
	},
	{
		name: "both lack final newline, context line", old: "a\nb\nc", new: "x\nb\nc", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+x\n b\n c\n\\ No newline at end of file\n",
	},
	{
		name: "no newline at all", old: "a", new: "b", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
	},
	{
		name: "crlf to lf", old: "a\r\nb\r\n", new: "a\nb\n", ctx: 3, added: 2, removed: 2,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n",
	},
	{
		name: "one crlf line among lf", old: "a\nb\nc\n", new: "a\nb\r\nc\n", ctx: 1, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+b\r\n c\n",
	},
	{
		name: "empty old", old: "", new: "a\nb\n", ctx: 3, added: 2,
		want: "--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n",
	},
	{
		name: "empty new", old: "a\nb\n", new: "", ctx: 3, removed: 2,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-a\n-b\n",
	},
	{
		name: "bom kept, text changed", old: "\uFEFFa\nb\n", new: "\uFEFFa\nc\n", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n \uFEFFa\n-b\n+c\n",
	},
	{
		name: "context 0", old: numbered(9), new: strings.Replace(numbered(9), "5\n", "five\n", 1), ctx: 0, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -5 +5 @@\n-5\n+five\n",
	},
	{
		name: "context 1", old: numbered(9), new: strings.Replace(numbered(9), "5\n", "five\n", 1), ctx: 1, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n",
	},
	{
		name: "negative context is 0", old: numbered(9), new: strings.Replace(numbered(9), "5\n", "five\n", 1), ctx: -4, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -5 +5 @@\n-5\n+five\n",
	},
	{
		name: "context larger than file", old: "a\nb\n", new: "a\nc\n", ctx: 1 << 40, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
	},
	{
		// 7 unchanged lines between the changes: more than 2*3, two hunks.
		name: "far apart changes, two hunks", old: numbered(20),
		new: string(replaceLine(replaceLine([]byte(numbered(20)), 3, "three\n"), 11, "eleven\n")), ctx: 3, added: 2, removed: 2,
		want: "--- a/x\n+++ b/x\n" +
			"@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n" +
			"@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n 13\n 14\n",
	},
	{
		// 6 unchanged lines between the changes: exactly 2*3, one hunk.
		name: "close changes, one hunk", old: numbered(20),
		new: string(replaceLine(replaceLine([]byte(numbered(20)), 3, "three\n"), 10, "ten\n")), ctx: 3, added: 2, removed: 2,
		want: "--- a/x\n+++ b/x\n" +
			"@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n",
	},
	{
		name: "context 0, adjacent lines changed apart", old: "a\nb\nc\n", new: "A\nb\nC\n", ctx: 0, added: 2, removed: 2,
		want: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+A\n@@ -3 +3 @@\n-c\n+C\n",
	},
	{
		name: "repeated lines, insertion", old: "a\na\na\n", new: "a\na\na\na\n", ctx: 3, added: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n a\n a\n a\n+a\n",
	},
	{
		// GNU diff puts a run of changes as low as it can go; a run at the
		// end of the changed middle goes on into the common suffix.
		name: "insertion slides down into the suffix", old: "b\nb\nb\na\n}\n\n", new: "b\nb\na\n}\n\n\n", ctx: 1, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -2,3 +2,2 @@\n b\n-b\n a\n@@ -6 +5,2 @@\n \n+\n",
	},
	{
		name: "insertion slides down among repeated lines", old: "a\nc\na\nb\na\n}\nc\n", new: "a\n\na\nb\nb\na\n}\nc\n", ctx: 3, added: 2, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1,7 +1,8 @@\n a\n-c\n+\n a\n b\n+b\n a\n }\n c\n",
	},
	{
		name: "blank lines do not anchor a rewrite", old: "a\n\nb\n\nc\n", new: "x\n\ny\n\nz\n", ctx: 3, added: 3, removed: 3,
		want: "--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+x\n \n-b\n+y\n \n-c\n+z\n",
	},
	{
		name: "html characters", old: "<a href=\"x\">&amp;</a>\n", new: "<b>&lt;</b>\n", ctx: 3, added: 1, removed: 1,
		want: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<a href=\"x\">&amp;</a>\n+<b>&lt;</b>\n",
	},
}

func TestUnified(t *testing.T) {
	for _, tc := range unifiedCases {
		t.Run(tc.name, func(t *testing.T) {
			r := Unified("x", []byte(tc.old), []byte(tc.new), Options{Context: tc.ctx})
			want := Result{Added: tc.added, Removed: tc.removed, Text: tc.want}
			if r != want {
				t.Errorf("Unified() = %+v\nwant        %+v", r, want)
			}
			checkApplies(t, tc.old, tc.new, r)
		})
	}
}

func TestUnifiedCreated(t *testing.T) {
	tests := []struct {
		name    string
		content string
		full    Result // Form: FormFull
		summary Result // Form: FormAuto and FormSummary
	}{
		{"two lines", "a\nb\n",
			Result{Added: 2, Text: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
			Result{Added: 2, Summary: true}},
		{"no final newline", "a",
			Result{Added: 1, Text: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n"},
			Result{Added: 1, Summary: true}},
		{"empty file is no change", "", Result{}, Result{Summary: true}},
		{"binary", "a\x00b", Omitted(ReasonBinary), Omitted(ReasonBinary)},
		{"over the basis", strings.Repeat("x\n", 10), Omitted(ReasonBasisTooLarge), Omitted(ReasonBasisTooLarge)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for form, want := range map[Form]Result{"": tc.summary, FormAuto: tc.summary, FormSummary: tc.summary, FormFull: tc.full} {
				got := UnifiedCreated("new.txt", []byte(tc.content), Options{Context: 3, BasisMaxBytes: 16, Form: form})
				if got != want {
					t.Errorf("UnifiedCreated(), form %q = %+v\nwant %+v", form, got, want)
				}
			}
		})
	}
}

func TestUnifiedSummary(t *testing.T) {
	opt := Options{Context: 3, Form: FormSummary}
	if got, want := Unified("x", []byte("a\nb\nc\n"), []byte("a\nB\nc\nd\n"), opt), (Result{Added: 2, Removed: 1, Summary: true}); got != want {
		t.Errorf("Unified() = %+v, want %+v", got, want)
	}
	if got, want := Unified("x", []byte("a\x00"), []byte("b"), opt), Omitted(ReasonBinary); got != want {
		t.Errorf("Unified() of binary = %+v, want %+v", got, want)
	}
	for _, in := range []string{"", "auto", "full", "summary"} {
		if _, ok := ParseForm(in); !ok {
			t.Errorf("ParseForm(%q) refused", in)
		}
	}
	if _, ok := ParseForm("some"); ok {
		t.Errorf("ParseForm(some) accepted")
	}
}

func TestUnifiedOmitted(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		basisMax int64
		want     Result
	}{
		{"nul in old", "a\x00\n", "a\n", 0, Omitted(ReasonBinary)},
		{"nul in new", "a\n", "a\x00\n", 0, Omitted(ReasonBinary)},
		{"invalid utf-8 in new", "a\n", "a\xff\n", 0, Omitted(ReasonBinary)},
		{"identical binary is still binary", "\x00", "\x00", 0, Omitted(ReasonBinary)},
		{"bom is text", "\uFEFFa\n", "a\n", 0, Result{Added: 1, Removed: 1, Text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-\uFEFFa\n+a\n"}},
		{"old too large", "abcdef\n", "a\n", 4, Omitted(ReasonBasisTooLarge)},
		{"new too large", "a\n", "abcdef\n", 4, Omitted(ReasonBasisTooLarge)},
		{"too large is checked before binary", "\x00\x00\x00\x00\x00", "a\n", 4, Omitted(ReasonBasisTooLarge)},
		{"at the limit is computed", "abc\n", "abd\n", 4, Result{Added: 1, Removed: 1, Text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-abc\n+abd\n"}},
		{"zero limit is no limit", string(big), string(bigChanged), 0, Result{Added: 1, Removed: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Unified("x", []byte(tc.old), []byte(tc.new), Options{BasisMaxBytes: tc.basisMax})
			if tc.want.Text == "" && tc.want.Omitted == "" {
				got.Text = "" // only the counts matter here
			}
			if got != tc.want {
				t.Errorf("Unified() = %+v\nwant        %+v", got, tc.want)
			}
		})
	}
}

func TestUnifiedTruncated(t *testing.T) {
	old, new := []byte(numbered(50)), []byte(strings.ReplaceAll(numbered(50), "5\n", "five\n"))
	full := Unified("x", old, new, Options{Context: 3})
	if full.Truncated || full.Added != 5 || full.Removed != 5 {
		t.Fatalf("untruncated diff: %+v", full)
	}
	tests := []struct {
		name     string
		maxBytes int
		want     string // "" means: a proper prefix of full.Text, cut after a '\n'
	}{
		{name: "one byte short", maxBytes: len(full.Text) - 1},
		{name: "middle", maxBytes: len(full.Text) / 2},
		{name: "within the first header line", maxBytes: 5, want: "--- a"},
		{name: "just the headers", maxBytes: len("--- a/x\n+++ b/x\n") + 3, want: "--- a/x\n+++ b/x\n"},
		{name: "exactly the size", maxBytes: len(full.Text), want: full.Text},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Unified("x", old, new, Options{Context: 3, MaxBytes: tc.maxBytes})
			if r.Added != full.Added || r.Removed != full.Removed {
				t.Errorf("counts = +%d -%d, want the full +%d -%d", r.Added, r.Removed, full.Added, full.Removed)
			}
			if len(r.Text) > tc.maxBytes {
				t.Errorf("len(text) = %d > MaxBytes %d", len(r.Text), tc.maxBytes)
			}
			if tc.want != "" {
				if r.Text != tc.want {
					t.Errorf("text = %q, want %q", r.Text, tc.want)
				}
				if wantTrunc := tc.want != full.Text; r.Truncated != wantTrunc {
					t.Errorf("truncated = %v, want %v", r.Truncated, wantTrunc)
				}
				return
			}
			if !r.Truncated || !strings.HasPrefix(full.Text, r.Text) || !strings.HasSuffix(r.Text, "\n") || len(r.Text) < tc.maxBytes-20 {
				t.Errorf("text is not the longest prefix of whole lines within %d bytes (truncated %v):\n%s", tc.maxBytes, r.Truncated, r.Text)
			}
		})
	}
}

func TestUnifiedTruncatedRuneBoundary(t *testing.T) {
	// The first line, "--- a/ééé…", is longer than the limit, which falls in
	// the middle of an 'é' (two bytes): the cut moves back before it.
	name := strings.Repeat("é", 10)
	for maxBytes := 1; maxBytes < 20; maxBytes++ {
		r := Unified(name, []byte("a\n"), []byte("b\n"), Options{MaxBytes: maxBytes})
		full := "--- a/" + name
		if !r.Truncated || len(r.Text) > maxBytes || len(r.Text) < maxBytes-1 || !utf8.ValidString(r.Text) || !strings.HasPrefix(full, r.Text) {
			t.Errorf("MaxBytes %d: text %q, truncated %v", maxBytes, r.Text, r.Truncated)
		}
	}
}

// TestUnifiedOverBudget: 20,000 lines drawn from 100 values, none popular
// enough for autojunk, are millions of equal pairs for SequenceMatcher
// (minutes); the middle is shown as one replacement instead.
func TestUnifiedOverBudget(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var old, new strings.Builder
	for range 20000 {
		fmt.Fprintf(&old, "%d\n", rng.Intn(100))
		fmt.Fprintf(&new, "%d\n", rng.Intn(100))
	}
	r := Unified("x", []byte(old.String()), []byte(new.String()), Options{Context: 3})
	if r.Added < 19000 || r.Removed < 19000 {
		t.Errorf("counts +%d -%d, want about 20000 each", r.Added, r.Removed)
	}
	checkApplies(t, old.String(), new.String(), r)
}

func TestLabel(t *testing.T) {
	tests := []struct{ name, want string }{
		{"src/a.go", "a/src/a.go"},
		{"with space.txt", "a/with space.txt"},
		{"été.txt", "a/été.txt"},
		{"evil\n+++ b/x", `"a/evil\n+++ b/x"`},
		{"tab\tquote\"back\\slash\r", `"a/tab\tquote\"back\\slash\015"`},
		{"/abs/path.go", "a/abs/path.go"},
		{"//abs//path.go", "a/abs/path.go"},
		{"./rel/../x", "a/./rel/../x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := label("a/", tc.name); got != tc.want {
				t.Errorf("label(%q) = %s, want %s", tc.name, got, tc.want)
			}
		})
	}
}

func TestResultJSON(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"computed", Result{Added: 1, Removed: 2, Text: "--- a/x\n"}, `{"added":1,"removed":2,"text":"--- a/x\n"}`},
		{"truncated", Result{Added: 1, Text: "t", Truncated: true}, `{"added":1,"removed":0,"text":"t","truncated":true}`},
		{"no change", Result{}, `{"added":0,"removed":0,"text":""}`},
		{"basis too large", Omitted(ReasonBasisTooLarge), `{"omitted":"basis_too_large"}`},
		{"binary", Omitted(ReasonBinary), `{"omitted":"binary"}`},
		{"summary", Result{Added: 3, Removed: 1, Summary: true}, `{"added":3,"removed":1,"summary":true}`},
		{"html is not escaped", Result{Text: "<a>&"}, `{"added":0,"removed":0,"text":"<a>&"}`},
	}
	// As cmd renders results: HTML escaping off.
	marshal := func(v any) (string, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(v)
		return strings.TrimSuffix(buf.String(), "\n"), err
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := marshal(tc.r)
			if err != nil || got != tc.want {
				t.Errorf("Encode() = %s, %v; want %s", got, err, tc.want)
			}
			// Embedded by pointer, as a write result holds it.
			got, err = marshal(struct {
				Diff *Result `json:"diff,omitempty"`
			}{&tc.r})
			if want := `{"diff":` + tc.want + `}`; err != nil || got != want {
				t.Errorf("embedded: Encode() = %s, %v; want %s", got, err, want)
			}
		})
	}
}

// TestUnifiedMatchesGNUDiff runs every table case through GNU diff and
// compares the hunks byte for byte.
func TestUnifiedMatchesGNUDiff(t *testing.T) {
	var pairs []gnuPair
	for _, tc := range unifiedCases {
		pairs = append(pairs, gnuPair{[]byte(tc.old), []byte(tc.new), max(tc.ctx, 0)})
	}
	for i, want := range runGNUDiff(t, pairs) {
		tc := unifiedCases[i]
		r := Unified("x", []byte(tc.old), []byte(tc.new), Options{Context: tc.ctx})
		if got := hunks(r.Text); got != want {
			t.Errorf("%s: hunks differ from GNU diff:\n--- ours\n%s--- gnu\n%s", tc.name, got, want)
		}
	}
}

// TestUnifiedRandomAgainstGNUDiff compares random small contents, built from
// a few lines that repeat, with and without a final newline, with GNU diff.
//
// GNU diff (Myers' algorithm, then its own boundary shifts) and difflib
// (longest common run first) may pick different alignments when several are
// possible, and difflib's diff is not always the shortest. Such a case is not
// a bug: there the diff must still apply to old to give new and be at most 4
// lines longer than GNU's, and the share of byte-identical results must stay
// high. (Over 20,000 cases of this generator: 95% identical, 0.5% two lines
// longer, 0.015% four lines longer, the rest as short as GNU's.)
func TestUnifiedRandomAgainstGNUDiff(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var pairs []gnuPair
	for i := range 400 {
		old := randomContent(rng)
		var new []byte
		if i%4 == 0 {
			new = randomContent(rng)
		} else {
			new = mutate(rng, old)
		}
		pairs = append(pairs, gnuPair{old, new, rng.Intn(4)})
	}
	same := 0
	for i, want := range runGNUDiff(t, pairs) {
		p := pairs[i]
		r := Unified("x", p.old, p.new, Options{Context: p.ctx})
		checkApplies(t, string(p.old), string(p.new), r)
		got := hunks(r.Text)
		if got == want {
			same++
			continue
		}
		ga, gr := countMarks(want)
		if r.Added+r.Removed > ga+gr+4 {
			t.Errorf("case %d (-U%d) old %q new %q: +%d -%d, GNU diff +%d -%d:\n--- ours\n%s--- gnu\n%s",
				i, p.ctx, p.old, p.new, r.Added, r.Removed, ga, gr, got, want)
		}
	}
	t.Logf("%d of %d byte-identical to GNU diff", same, len(pairs))
	if same < len(pairs)*9/10 {
		t.Errorf("only %d of %d byte-identical to GNU diff", same, len(pairs))
	}
}

// randomContent returns 0 to 7 lines from a small alphabet, often without
// a final newline.
func randomContent(rng *rand.Rand) []byte {
	alphabet := []string{"a\n", "b\n", "c\n", "\n", "a\r\n", "}\n"}
	var b []byte
	for range rng.Intn(8) {
		b = append(b, alphabet[rng.Intn(len(alphabet))]...)
	}
	if len(b) > 0 && rng.Intn(3) == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// mutate returns content with a few lines inserted, deleted or replaced,
// and sometimes its final newline toggled.
func mutate(rng *rand.Rand, content []byte) []byte {
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	alphabet := []string{"a\n", "b\n", "c\n", "x\n", "\n"}
	for range 1 + rng.Intn(3) {
		i := rng.Intn(len(lines) + 1)
		switch rng.Intn(3) {
		case 0:
			lines = append(lines[:i], append([]string{alphabet[rng.Intn(len(alphabet))]}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = alphabet[rng.Intn(len(alphabet))]
			}
		}
	}
	s := strings.Join(lines, "")
	if rng.Intn(4) == 0 {
		if strings.HasSuffix(s, "\n") {
			s = s[:len(s)-1]
		} else {
			s += "\n"
		}
	}
	return []byte(s)
}

type gnuPair struct {
	old, new []byte
	ctx      int
}

// runGNUDiff returns GNU diff's hunks for each pair ("" when equal), without
// the two header lines. Pairs are written as files of two trees and compared
// by one `diff -r` per context size, since a process per pair would be slow.
// It skips the test when GNU diff is not installed.
func runGNUDiff(t *testing.T, pairs []gnuPair) []string {
	t.Helper()
	if _, err := os.Stat(gnuDiff); err != nil {
		t.Skipf("no reference to compare with: %s is missing (install GNU diffutils)", gnuDiff)
	}
	out := make([]string, len(pairs))
	byCtx := map[int][]int{}
	for i, p := range pairs {
		byCtx[p.ctx] = append(byCtx[p.ctx], i)
	}
	for ctx, idx := range byCtx {
		dir := t.TempDir()
		for _, side := range []string{"a", "b"} {
			if err := os.Mkdir(filepath.Join(dir, side), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, i := range idx {
			name := strconv.Itoa(i)
			if err := os.WriteFile(filepath.Join(dir, "a", name), pairs[i].old, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "b", name), pairs[i].new, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(gnuDiff, "-r", "-a", "-U"+strconv.Itoa(ctx), "a", "b")
		cmd.Dir = dir
		stdout, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Fatalf("%s: %v", cmd, err)
		}
		// Each file's diff opens with "diff -r … a/N b/N"; no line of a
		// hunk can start with "diff".
		cur, skip := -1, 0
		for _, line := range splitAfter(string(stdout)) {
			switch {
			case strings.HasPrefix(line, "diff "):
				f := strings.Fields(line)
				cur, _ = strconv.Atoi(strings.TrimPrefix(f[len(f)-1], "b/"))
				skip = 2 // the "---" and "+++" headers
			case skip > 0:
				skip--
			case cur >= 0:
				out[cur] += line
			}
		}
	}
	return out
}

// hunks returns a diff text without its two header lines.
func hunks(text string) string {
	for range 2 {
		_, text, _ = strings.Cut(text, "\n")
	}
	return text
}

// countMarks counts the '+' and '-' lines of hunks (no headers).
func countMarks(hunks string) (added, removed int) {
	for _, l := range strings.SplitAfter(hunks, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

// checkApplies checks that r's diff turns old into new and that its counts
// are its '+' and '-' lines.
func checkApplies(t *testing.T, old, new string, r Result) {
	t.Helper()
	got, err := apply(old, r.Text)
	if err != nil {
		t.Errorf("applying the diff of %q → %q: %v\n%s", old, new, err, r.Text)
		return
	}
	if got != new {
		t.Errorf("applying the diff of %q → %q gives %q\n%s", old, new, got, r.Text)
	}
	if a, d := countMarks(hunks(r.Text)); a != r.Added || d != r.Removed {
		t.Errorf("counts +%d -%d, the text has +%d -%d", r.Added, r.Removed, a, d)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

// apply is a strict patch(1) for one file: every context and removed line
// must match old at the place the hunk header says, and the hunk headers'
// counts and new-side positions must be right.
func apply(old, diffText string) (string, error) {
	if diffText == "" {
		return old, nil
	}
	lines := splitAfter(diffText)
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no file headers")
	}
	src := splitAfter(old)
	var out []string
	pos := 0
	for i := 2; i < len(lines); {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i+1, lines[i])
		}
		i++
		oldStart, oldLen := rangeOf(m[1], m[2])
		newStart, newLen := rangeOf(m[3], m[4])
		if oldStart < pos || oldStart > len(src) {
			return "", fmt.Errorf("hunk at old line %d overlaps or is out of range", oldStart+1)
		}
		out = append(out, src[pos:oldStart]...)
		pos = oldStart
		if len(out) != newStart {
			return "", fmt.Errorf("hunk at new line %d, but it lands at %d", newStart+1, len(out)+1)
		}
		// Read the body; "\ No newline" takes the '\n' off the line before.
		type entry struct {
			mark byte
			line string
		}
		var body []entry
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			if l == "\\ No newline at end of file\n" {
				if len(body) == 0 {
					return "", fmt.Errorf("line %d: no line to mark", i+1)
				}
				body[len(body)-1].line = strings.TrimSuffix(body[len(body)-1].line, "\n")
				continue
			}
			if l[0] != ' ' && l[0] != '-' && l[0] != '+' {
				return "", fmt.Errorf("line %d: bad line %q", i+1, l)
			}
			body = append(body, entry{l[0], l[1:]})
		}
		o, n := 0, 0
		for _, e := range body {
			if e.mark != '+' {
				if pos >= len(src) || src[pos] != e.line {
					return "", fmt.Errorf("old line %d is not %q", pos+1, e.line)
				}
				pos++
				o++
			}
			if e.mark != '-' {
				out = append(out, e.line)
				n++
			}
		}
		if o != oldLen || n != newLen {
			return "", fmt.Errorf("hunk says -%d +%d, holds -%d +%d", oldLen, newLen, o, n)
		}
	}
	return strings.Join(append(out, src[pos:]...), ""), nil
}

// rangeOf turns a hunk header range into a 0-based start and a length.
func rangeOf(start, length string) (int, int) {
	s, _ := strconv.Atoi(start)
	n := 1
	if length != "" {
		n, _ = strconv.Atoi(length)
	}
	if n == 0 {
		return s, 0 // the line before an empty range
	}
	return s - 1, n
}

// splitAfter splits s after each '\n', with no empty last element.
func splitAfter(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func FuzzUnified(f *testing.F) {
	for _, tc := range unifiedCases {
		if len(tc.old) < 1000 {
			f.Add([]byte(tc.old), []byte(tc.new), uint8(3), uint16(0))
		}
	}
	f.Add([]byte("a\r\nb"), []byte("a\nb\r"), uint8(0), uint16(7))
	f.Add([]byte("é\n"), []byte("\xc3"), uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, old, new []byte, ctx uint8, maxBytes uint16) {
		opt := Options{Context: int(ctx % 8)}
		r := Unified("x", old, new, opt)
		if text.IsBinary(old) || text.IsBinary(new) {
			if r != Omitted(ReasonBinary) {
				t.Fatalf("binary input: %+v", r)
			}
		} else {
			checkApplies(t, string(old), string(new), r)
		}

		// Random bytes seldom repeat lines, where alignment gets hard: read
		// each byte as a line of a small alphabet too.
		old, new = fuzzLines(old), fuzzLines(new)
		r = Unified("x", old, new, opt)
		checkApplies(t, string(old), string(new), r)

		// Cut, the text is a prefix of whole lines and the counts stay.
		opt.MaxBytes = int(maxBytes)
		cut := Unified("x", old, new, opt)
		if cut.Added != r.Added || cut.Removed != r.Removed || !strings.HasPrefix(r.Text, cut.Text) ||
			(opt.MaxBytes > 0 && len(cut.Text) > opt.MaxBytes) || cut.Truncated != (cut.Text != r.Text) {
			t.Fatalf("MaxBytes %d: %+v, untruncated %+v", opt.MaxBytes, cut, r)
		}
	})
}

// fuzzLines reads each byte of b as a line of a small alphabet; the last
// line may lack its newline.
func fuzzLines(b []byte) []byte {
	alphabet := []string{"a\n", "b\n", "\n", "}\n", "a\r\n", "c\n"}
	var out []byte
	for _, c := range b {
		out = append(out, alphabet[int(c)%len(alphabet)]...)
	}
	if len(b) > 0 && b[0]&0x80 != 0 {
		out = out[:len(out)-1]
	}
	return out
}

func BenchmarkUnified1MiBOneLine(b *testing.B) {
	opt := Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 64 << 10}
	b.SetBytes(int64(len(big)))
	b.ReportAllocs()
	for b.Loop() {
		if r := Unified("x", big, bigChanged, opt); r.Added != 1 {
			b.Fatalf("%+v", r)
		}
	}
}

func BenchmarkUnifiedSmall(b *testing.B) {
	old := []byte(numbered(40))
	new := []byte(strings.NewReplacer("7\n", "seven\n", "30\n", "").Replace(numbered(40)))
	opt := Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 64 << 10}
	b.ReportAllocs()
	for b.Loop() {
		Unified("x", old, new, opt)
	}
}

// BenchmarkUnified1MiBRewrite is the worst case the basis limit allows: a
// 1 MiB file rewritten throughout, with many repeated lines.
func BenchmarkUnified1MiBRewrite(b *testing.B) {
	var old, new bytes.Buffer
	for i := 0; new.Len() < 1<<20-100; i++ {
		fmt.Fprintf(&old, "\tx := f(%d)\n}\n\n", i)
		fmt.Fprintf(&new, "\ty := g(%d)\n}\n\n", i*7)
	}
	opt := Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 64 << 10}
	b.ReportAllocs()
	for b.Loop() {
		if r := Unified("x", old.Bytes(), new.Bytes(), opt); r.Omitted != "" || r.Added == 0 {
			b.Fatalf("%+v", r)
		}
	}
}
