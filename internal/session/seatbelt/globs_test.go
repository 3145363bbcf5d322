package seatbelt

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
)

// TestGlobRegexIsCovers: a deny_read glob's regex matches exactly the
// paths the fence's own matcher (pathmatch.Covers) denies, on random
// globs and paths drawn from a small alphabet so that they meet often;
// letters differing by case alone are the one exception, denied by the
// regex on purpose (the Mac's case-insensitive volumes).
func TestGlobRegexIsCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", ".env", "x.y", "a b", "(c)", "d+e", "$f", "g-h", "i]", "{j}", "k|l"}
	globParts := append(append([]string(nil), names...), "*", "?", "**", "*.y", ".e*", "a*b", "?.y")
	draw := func(from []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = from[rng.IntN(len(from))]
		}
		return out
	}
	for i := 0; i < 4000; i++ {
		glob := strings.Join(draw(globParts, 1+rng.IntN(4)), "/")
		if rng.IntN(2) == 0 {
			glob = "/" + glob
		}
		match := glob
		if !strings.HasPrefix(match, "/") {
			match = "**/" + match
		}
		re, why, ok := GlobRegex(glob, identity)
		if !ok {
			t.Fatalf("%q: no regex: %s", glob, why)
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("%q: regex %q: %v", glob, re, err)
		}
		for j := 0; j < 20; j++ {
			path := "/" + strings.Join(draw(names, 1+rng.IntN(5)), "/")
			if got, want := rx.MatchString(path), pathmatch.Covers(match, path); got != want {
				t.Fatalf("glob %q, path %q: regex %q says %t, Covers %t", glob, path, re, got, want)
			}
		}
	}
}

// TestGlobRegexRows: what the profile writes for the globs people write,
// and the globs it cannot carry.
func TestGlobRegexRows(t *testing.T) {
	macTmp := func(p string) (string, error) { return macSpelling(p), nil }
	for _, tc := range []struct{ glob, re, why string }{
		{"**/.env", `^(/[^/]+)*/[.][eE][nN][vV](/.*)?$`, ""},
		{".env", `^(/[^/]+)*/[.][eE][nN][vV](/.*)?$`, ""},
		{"*.pem", `^(/[^/]+)*/[^/]*[.][pP][eE][mM](/.*)?$`, ""},
		{"**/secrets/**", `^(/[^/]+)*/[sS][eE][cC][rR][eE][tT][sS](/.*)?$`, ""},
		{"/tmp/a.b/*/k", `^/private/tmp/a[.]b/[^/]*/[kK](/.*)?$`, ""},
		{"/Users/*/.ssh", `^/Users/[^/]*/[.][sS][sS][hH](/.*)?$`, ""},
		{"/*/x", `^/[^/]*/[xX](/.*)?$`, ""},
		{"**/[Ss]ecret", "", "character class"},
		{`**/a\*`, "", "character class or escape"},
		{`**/a"b`, "", "without a backslash"},
		{`**/a^b`, "", "without a backslash"},
		{"**/a-b]c d", `^(/[^/]+)*/[aA]-[bB]][cC] [dD](/.*)?$`, ""},
		{"/Users/" + strings.Repeat("x", MaxString) + "/*", "", "over"},
	} {
		re, why, ok := GlobRegex(tc.glob, macTmp)
		if tc.why == "" && (!ok || re != tc.re) {
			t.Errorf("%q: got %q (%s), want %q", tc.glob, re, why, tc.re)
		}
		if tc.why != "" && (ok || !strings.Contains(why, tc.why)) {
			t.Errorf("%q: got %q, ok=%t, why %q; want refused for %q", tc.glob, re, ok, why, tc.why)
		}
	}
	for _, path := range []string{"/Users/a/p/.ENV", "/Users/a/p/.Env/x"} {
		re, _, _ := GlobRegex("**/.env", identity)
		if !regexp.MustCompile(re).MatchString(path) {
			t.Errorf("%s: not denied in another case", path)
		}
	}
}
