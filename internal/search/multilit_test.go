package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// identifiers are fifty names of Go's standard library, as an agent
// greps for the callers of several functions at once.
var identifiers = strings.Fields(`ReadFile WriteFile Open Create Remove RemoveAll Rename Mkdir MkdirAll Stat Lstat
	Chmod Chown Getwd Getenv Setenv Exit Pipe NewFile Readlink Symlink Link Truncate Chdir Chtimes
	Marshal Unmarshal NewEncoder NewDecoder Indent Compact Valid HTMLEscape Errorf Sprintf Fprintf
	Println Sscanf NewReader NewWriter ReadAll Copy CopyN LimitReader MultiWriter TeeReader
	ReadDir WalkDir Glob Abs`)

// grepLines runs the scanner of grep over text with the matcher m and
// returns every match it found and their count, as the search shows them.
func grepLines(t testing.TB, m matcher, text string, context int) ([]Match, int) {
	t.Helper()
	opt := GrepOptions{Limit: 1 << 30, MaxBytes: 1 << 30, MaxLineBytes: 1 << 20, Context: context}
	s := scanner{opt: opt, m: m, full: &atomic.Bool{}}
	f := s.file(strings.NewReader(text), "f", 0)
	return f.matches, f.count
}

// sameAsRegexp checks that the matcher grep compiles for pattern finds
// exactly what Go's regexp alone finds in text: the same lines, columns
// and texts.
func sameAsRegexp(t testing.TB, pattern, text string, ignoreCase bool) {
	t.Helper()
	m, err := compileMatcher(GrepOptions{Pattern: pattern, IgnoreCase: ignoreCase})
	if err != nil {
		return // a pattern grep refuses is refused on every path
	}
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	r, err := regexp.Compile(flags + pattern)
	if err != nil {
		t.Fatalf("%q: grep compiled it, regexp does not: %v", pattern, err)
	}
	// Where the match ends shows only in a cut line: compare each line's
	// match, start and end, directly.
	for _, line := range strings.Split(text, "\n") {
		gs, ge := m.find([]byte(line))
		ws, we := -1, -1
		if loc := r.FindStringIndex(line); loc != nil {
			ws, we = loc[0], loc[1]
		}
		if gs != ws || ge != we {
			t.Fatalf("pattern %q (-i %v) on the line %q (matcher %T): match [%d,%d), want [%d,%d)", pattern, ignoreCase, line, m, gs, ge, ws, we)
		}
	}
	for _, ctx := range []int{0, 1} {
		got, gotN := grepLines(t, m, text, ctx)
		want, wantN := grepLines(t, re{r}, text, ctx)
		if gotN != wantN || !reflect.DeepEqual(got, want) {
			t.Fatalf("pattern %q (-i %v, context %d) on %q (matcher %T):\n got %d %+v\nwant %d %+v", pattern, ignoreCase, ctx, text, m, gotN, got, wantN, want)
		}
	}
}

// Go's regexp folds case by Unicode's simple folding; the automaton folds
// ASCII and knows the two other runes that fold to an ASCII letter. A
// Unicode version that added a third would fail here, not in a search.
func TestFoldOrbitsOfASCII(t *testing.T) {
	want := map[rune]rune{'k': '\u212A', 's': '\u017F'}
	for c := 'a'; c <= 'z'; c++ {
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r == unicode.ToUpper(c) {
				continue
			}
			if want[c] != r {
				t.Errorf("%q folds to %U, which the automaton does not know", c, r)
			}
		}
	}
}

// An alternation of literals gets the automaton; what has no literal set
// worth it keeps the paths it had.
func TestMultiLiteralChosen(t *testing.T) {
	fifty := strings.Join(identifiers, "|")
	for _, tc := range []struct {
		pattern    string
		ignoreCase bool
		want       string // the matcher's type
	}{
		{"foo|bar|baz", false, "search.acMatcher"},
		{fifty, false, "search.acMatcher"},
		{fifty, true, "search.acMatcher"},
		{`\b(` + fifty + `)\(`, false, "search.acMatcher"},
		{"getFoo|getBar", false, "search.acMatcher"}, // parsed as get(?:Foo|Bar)
		{"(?i)ReadFile|WriteFile", false, "search.acMatcher"},
		{`func \w+Handler`, true, "search.acMatcher"}, // one literal, case ignored
		{`func \w+Handler`, false, "search.prefiltered"},
		{"foo|.*", false, "search.re"},
		{"a|b", false, "search.re"}, // literals too short to prefilter
		{"(foo|)x", false, "search.re"},
		{"héllo|wörld", true, "search.re"}, // folding beyond ASCII is the regexp's
		{"héllo|wörld", false, "search.acMatcher"},
		{"foo\nbar|baz", false, "search.re"},
		{"ReadFile", false, "search.literal"},
	} {
		m, err := compileMatcher(GrepOptions{Pattern: tc.pattern, IgnoreCase: tc.ignoreCase})
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := fmt.Sprintf("%T", m); got != tc.want {
			t.Errorf("%.40q (-i %v): %s, want %s", tc.pattern, tc.ignoreCase, got, tc.want)
		}
	}
}

// multiLiteralSeeds are the cases the differential tests start from.
var multiLiteralSeeds = []struct {
	pattern, text string
	ignoreCase    bool
}{
	{"foo|bar|baz", "a foo\nbar and baz\nnone\nbazfoo", false},
	{"foo|foobar", "xfoobar\nfoo", false},  // leftmost-first: foo, not foobar
	{"foobar|foo", "xfoobar\nfoo", false},  // leftmost-first: foobar
	{"ab|bc|cd", "abcd\nbcd\ncd\n", false}, // overlapping literals
	{"READ|write", "Read WRITE\nwrite read\n", true},
	{"kind|size", "\u212Aind si\u017Fe KIND Size\nk\u212A", true}, // Kelvin sign, long s
	{"kind|size", "\u212Aind si\u017Fe\n", false},
	{"kind|size", "\u212Aind\nsi\u017Fe\n", true}, // found only through the fold
	{"abcd|bc", "abce\n", false},                  // bc ends inside a longer path
	{"abcd|bcx|cy", "abcy\n", false},
	{`\b(Open|Stat)\(`, "os.Open(x)\nReOpen(y)\nStat (z)\nos.Stat(w)", false},
	{"getFoo|getBar|setFoo", "getBaz getBar\nsetFoo", false},
	{"^foo|bar$", "foo bar\nbar foo\n  foo\nxbar", false},
	{"(?i)ReadFile|WriteFile", "READFILE\nwritefile\n", false},
	{"héllo|wörld", "héllo wörld\nHÉLLO\n", false},
	{"abc|abd", "abd abc\n", true},
	{"xx|yy", "xxx\r\nyy\r\n", false},
	{`\w+Handler`, "fooHANDLER\nbarhandler x\n", true},
	{"foo|bar", "foo\x00bar", false},
	{"a+b|cd", "aaab\ncd", false},
}

// TestMultiLiteralSameAsRegexp: on the seeds, and on random alternations
// of identifiers against random texts built of their pieces (bounded in
// time), the automaton's search finds exactly what the regexp alone
// finds.
func TestMultiLiteralSameAsRegexp(t *testing.T) {
	for _, s := range multiLiteralSeeds {
		sameAsRegexp(t, s.pattern, s.text, s.ignoreCase)
	}
	rng := rand.New(rand.NewPCG(40, 1))
	pieces := append([]string{" ", "\n", "(", "\u212A", "\u017F", "x", "\r\n", "Re", "ad"}, identifiers...)
	deadline := time.Now().Add(2 * time.Second)
	n := 0
	for ; n < 3000 && time.Now().Before(deadline); n++ {
		k := 2 + rng.IntN(8)
		alts := make([]string, k)
		for i := range alts {
			alts[i] = identifiers[rng.IntN(len(identifiers))]
			if rng.IntN(4) == 0 {
				alts[i] = strings.ToLower(alts[i][:len(alts[i])/2+1])
			}
		}
		pattern := strings.Join(alts, "|")
		switch rng.IntN(4) {
		case 0:
			pattern = `\b(` + pattern + `)\b`
		case 1:
			pattern = "(" + pattern + `)\(`
		}
		var b strings.Builder
		for range 5 + rng.IntN(60) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) == 0 {
				p = strings.ToUpper(p)
			}
			b.WriteString(p)
		}
		sameAsRegexp(t, pattern, b.String(), rng.IntN(2) == 0)
	}
	// Literals over a small alphabet overlap and nest in every way the
	// automaton's failure links must follow.
	for ; n < 6000 && time.Now().Before(deadline.Add(time.Second)); n++ {
		word := func(alphabet string, min, max int) string {
			var b strings.Builder
			for range min + rng.IntN(max-min+1) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			return b.String()
		}
		alts := make([]string, 2+rng.IntN(6))
		for i := range alts {
			alts[i] = word("abcK", 2, 4)
		}
		// In the text, Z is the Kelvin sign and | a line break.
		text := strings.NewReplacer("Z", "\u212A", "|", "\n").Replace(word("abcKkZ|", 0, 60))
		sameAsRegexp(t, strings.Join(alts, "|"), text, rng.IntN(2) == 0)
	}
	t.Logf("%d random cases", n)
}

// FuzzMultiLiteral: whatever the pattern and text, grep's matcher finds
// what the regexp alone finds.
func FuzzMultiLiteral(f *testing.F) {
	for _, s := range multiLiteralSeeds {
		f.Add(s.pattern, s.text, s.ignoreCase)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, ignoreCase bool) {
		if len(pattern) > 200 || len(text) > 4096 {
			return
		}
		sameAsRegexp(t, pattern, text, ignoreCase)
	})
}

// BenchmarkGrepAlternation is the search of fifty identifiers through
// the automaton against the regexp alone, on Go source text.
func BenchmarkGrepAlternation(b *testing.B) {
	// One line in fifty calls one of them, as in a real tree.
	src := append(bytes.Repeat([]byte("\tif err := dec.Decode(&v); err != nil {\n\t\treturn nil, err\n\t}\n\tx := strings.TrimSpace(line)\n"), 12),
		"\tdata, err := os.ReadFile(name)\n"...)
	src = bytes.Repeat(src, 400)
	pattern := strings.Join(identifiers, "|")
	ac, _ := compileMatcher(GrepOptions{Pattern: pattern})
	plain := re{regexp.MustCompile("(?m)" + pattern)}
	for _, m := range []struct {
		name string
		m    matcher
	}{{"automaton", ac}, {"regexp", plain}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				s := scanner{opt: GrepOptions{Limit: 1 << 30, MaxBytes: 1 << 30, MaxLineBytes: 1 << 20}, m: m.m, full: &atomic.Bool{}}
				s.file(bytes.NewReader(src), "f", 0)
			}
		})
	}
}
