package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// refGrep is the reference grep: split the file into lines, match each
// line alone.
func refGrep(t *testing.T, content string, pat *regexp.Regexp, ctx int) []Match {
	t.Helper()
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	var out []Match
	for i, l := range lines {
		loc := pat.FindStringIndex(l)
		if loc == nil {
			continue
		}
		m := Match{Path: "f.txt", Line: i + 1, Column: loc[0] + 1, Text: l}
		for j := max(0, i-ctx); j < i; j++ {
			m.Before = append(m.Before, lines[j])
		}
		for j := i + 1; j < len(lines) && j <= i+ctx; j++ {
			m.After = append(m.After, lines[j])
		}
		out = append(out, m)
	}
	return out
}

// TestGrepAgainstReference searches random files with buffers small
// enough that lines, matches and context straddle every boundary, and
// compares with a line-by-line search.
func TestGrepAgainstReference(t *testing.T) {
	f, dir := searchFence(t)
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"ab", "abc", "x", "", "  ab  ", "cab", "zzzzzzzzzzzzzzzzzzzz", "a\rb"}
	patterns := []string{"ab", "^ab", "b$", "a.c", `\bab\b`, "c?ab", "z+", `\s`, "c?abc$", `zzz\s*ab`, `x?(abc)\s`, `\nabc`}
	for iter := range 500 {
		var b strings.Builder
		for n := r.IntN(40); n > 0; n-- {
			for k := r.IntN(4); k > 0; k-- {
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		if r.IntN(3) == 0 {
			b.WriteString("ab tail without newline")
		}
		content := b.String()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		bufSize := 8 + r.IntN(64)
		pat := patterns[r.IntN(len(patterns))]
		ctx := r.IntN(3)
		target, err := f.Resolve("f.txt")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Grep(f, []sandbox.Target{target}, GrepOptions{Pattern: pat, Context: ctx, Limit: 1 << 20, MaxBytes: 1 << 30, MaxLineBytes: 1 << 20, bufSize: bufSize})
		if err != nil {
			t.Fatal(err)
		}
		want := refGrep(t, content, regexp.MustCompile(pat), ctx)
		for i := range want {
			want[i].Text = strings.TrimSuffix(want[i].Text, "\r")
			for j := range want[i].Before {
				want[i].Before[j] = strings.TrimSuffix(want[i].Before[j], "\r")
			}
			for j := range want[i].After {
				want[i].After[j] = strings.TrimSuffix(want[i].After[j], "\r")
			}
		}
		if want == nil {
			want = []Match{}
		}
		if !reflect.DeepEqual(res.Matches, want) {
			t.Fatalf("iteration %d, pattern %q, context %d, buffer %d, content %q:\n got %+v\nwant %+v", iter, pat, ctx, bufSize, content, res.Matches, want)
		}
		if res.Total != len(want) || res.FilesSkipped.TooLarge != 0 {
			t.Fatalf("iteration %d: total %d, skipped %+v", iter, res.Total, res.FilesSkipped)
		}
	}
}

// TestGrepTooLarge: a line longer than the largest buffer skips the file
// as too large, in bounded memory.
func TestGrepTooLarge(t *testing.T) {
	f, dir := searchFence(t)
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte("ab\n"+strings.Repeat("x", 100)+"ab\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "short.txt"), []byte("ab\n"+strings.Repeat("x", 40)+"ab\n"), 0o644)
	target, _ := f.Resolve(".")
	res, err := Grep(f, []sandbox.Target{target}, GrepOptions{Pattern: "ab", Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 1000, bufSize: 16, maxBufSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	// long.txt is searched up to its long line: its first line matches.
	if res.FilesSkipped.TooLarge != 1 || res.FilesSearched != 2 || len(res.Matches) != 3 || res.Matches[0].Path != "long.txt" || res.Matches[2].Path != "short.txt" {
		t.Errorf("got %+v", res)
	}
}

func TestComparePaths(t *testing.T) {
	sorted := []string{"a", "a/b", "a/b/c", "a/c", "a.txt", "a0", "b"}
	for i := range sorted {
		for j := range sorted {
			got := comparePaths(sorted[i], sorted[j])
			want := map[bool]int{true: -1, false: 1}[i < j]
			if i == j {
				want = 0
			}
			if got != want {
				t.Errorf("comparePaths(%q, %q) = %d, want %d", sorted[i], sorted[j], got, want)
			}
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []cursor{{}, {arg: 2, rel: "a/b c/d.go", line: 7}, {rel: "x\x00y"}} {
		got, err := parseCursor(c.String())
		if err != nil || *got != c {
			t.Errorf("%+v: got %+v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "!!", "MQ", "Mg" + "AwADAAYQ"} {
		if _, err := parseCursor(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestCutAround(t *testing.T) {
	line := []byte(strings.Repeat("é", 20) + "NEEDLE" + strings.Repeat("ü", 20))
	got, cut := cutAround(line, 40, 46, 16)
	if !cut || !strings.Contains(got, "NEEDLE") || !strings.HasPrefix(got, ellipsis) || !strings.HasSuffix(got, ellipsis) {
		t.Errorf("got %q, %v", got, cut)
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("cut inside a character: %q", got)
	}
}

func TestRequiredLiteral(t *testing.T) {
	for pat, want := range map[string]string{
		`err(or)? != nil`: " != nil",
		`c?abc$`:          "abc",
		`(func) \w+\(`:    "func",
		`a|bcd`:           "",
		`(?i)abcdef`:      "",
		`ab`:              "",
		`\nabc`:           "",
	} {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := requiredLiteral(re.Simplify()); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", pat, got, want)
		}
	}
}

// TestGrepParallelSameAsSequential: the workers never change the result,
// whatever the limits, against a search in the walk's own goroutine.
func TestGrepParallelSameAsSequential(t *testing.T) {
	f, dir := searchFence(t)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		var b strings.Builder
		for n := r.IntN(30); n > 0; n-- {
			if r.IntN(4) == 0 {
				b.WriteString("match here ")
			}
			b.WriteString("line\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("d%d/s%d/f%03d.txt", i%7, i%3, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	target, _ := f.Resolve(".")
	for _, opt := range []GrepOptions{
		{Pattern: "match", Limit: 1 << 20, MaxBytes: 1 << 30},
		{Pattern: "match", Limit: 37, MaxBytes: 1 << 30, Context: 1},
		{Pattern: "match", Limit: 1 << 20, MaxBytes: 3000},
		{Pattern: "m.tch", Limit: 5, MaxBytes: 1 << 30, Count: true},
		{Pattern: "match", Limit: 1, MaxBytes: 1 << 30},
	} {
		opt.MaxLineBytes = DefaultMaxLineBytes
		par, err := Grep(f, []sandbox.Target{target}, opt)
		if err != nil {
			t.Fatal(err)
		}
		prev := runtime.GOMAXPROCS(1)
		seq, err := Grep(f, []sandbox.Target{target}, opt)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(par, seq) {
			t.Errorf("%+v: parallel and sequential differ:\n%+v\n%+v", opt, par, seq)
		}
		if prev < 2 {
			t.Log("one CPU: both searches were sequential")
		}
	}
}

// searchFence is a workspace-write fence on a fresh folder, the kernel
// layer off so the test process is not restricted.
func searchFence(t *testing.T) (*sandbox.Fence, string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.NewFence(policy.Policy{
		Mode: policy.WorkspaceWrite, Cwd: dir, Enforce: policy.EnforceOff,
		MaxMode: policy.DangerFullAccess, Protected: policy.DefaultProtected,
	}), dir
}
