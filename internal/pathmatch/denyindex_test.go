package pathmatch

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The compiled deny_read matcher must decide exactly as the globs tried
// in turn with Covers: same verdict, same glob named. A bounded
// fuzz: random lists and random paths from alphabets that hit every
// index (names, suffixes, prefixes, other patterns, "**" anywhere) and
// the components those match or almost match.

var (
	globComponents = []string{"**", "*", "a", "b", ".env", ".env.*", "*.pem", "*.key", "secrets",
		"a*", "*a", "a?", "[ab]*", "x[.]pem", "\\*", ".ssh", "*.*", "?", "[", "b**"}
	pathComponents = []string{"a", "b", "ab", "ba", ".env", ".env.local", ".envrc", "x.pem", ".pem", "pem",
		"id.key", "secrets", "secret", "c", "*", "[", "x.", ".ssh", "aa", "x.pem.bak"}
)

// oldFirst is the matcher before compilation: each glob in turn.
func oldFirst(globs []string, name string) int {
	for i, g := range globs {
		if Covers(g, name) {
			return i
		}
	}
	return -1
}

func randomGlobs(r *rand.Rand) []string {
	var globs []string
	for range 1 + r.IntN(5) {
		var parts []string
		for range 1 + r.IntN(4) {
			parts = append(parts, globComponents[r.IntN(len(globComponents))])
		}
		g := strings.Join(parts, "/")
		switch r.IntN(3) {
		case 0:
			g = "/" + g
		case 1:
			g = "**/" + g
		}
		globs = append(globs, g)
	}
	return globs
}

func randomPath(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString("/")
		b.WriteString(pathComponents[r.IntN(len(pathComponents))])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

func TestDenyMatcherAgreesWithGlobs(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	const lists, pathsPerList = 3000, 200
	covered := 0
	for range lists {
		globs := randomGlobs(r)
		m := NewMatcher(globs)
		for range pathsPerList {
			p := randomPath(r)
			want := oldFirst(globs, p)
			if got := m.First(p); got != want {
				t.Fatalf("globs %q, path %q: matcher says %d, the globs in turn %d", globs, p, got, want)
			}
			if want >= 0 {
				covered++
			}
			checkChild(t, globs, m, p)
		}
	}
	// The alphabets must make both verdicts common, or the agreement
	// says little.
	if total := lists * pathsPerList; covered < total/10 || covered > total*9/10 {
		t.Fatalf("%d of %d paths covered: the generator no longer tests both sides", covered, total)
	}
}

// checkChild checks child and nameCandidate on p as the entry of its
// folder, when the folder is covered by no glob (as a walk asks them).
func checkChild(t *testing.T, globs []string, m *Matcher, p string) {
	t.Helper()
	i := strings.LastIndexByte(p, '/')
	dir, name := p[:i], p[i+1:]
	if dir == "" {
		dir = "/"
	}
	if name == "" || oldFirst(globs, dir) >= 0 {
		return
	}
	want := oldFirst(globs, p)
	if got := m.Child(dir, name); got != want {
		t.Fatalf("globs %q, %q in %q: child says %d, the globs in turn %d", globs, name, dir, got, want)
	}
	if want >= 0 && !m.NameCandidate(name) {
		t.Fatalf("globs %q: %q is covered, but its name %q is no candidate", globs, p, name)
	}
}

// The usual list of issue 26, on the paths it is about.
func TestDenyMatcherUsualList(t *testing.T) {
	var globs []string
	for _, g := range []string{"/home/u/.ssh/**", "/home/u/.aws/**", "/home/u/.gnupg/**", "**/.env", "**/.env.*",
		"**/*.pem", "**/*.key", "**/secrets/**"} {
		globs = append(globs, g)
	}
	m := NewMatcher(globs)
	for p, want := range map[string]int{
		"/home/u/.ssh":                    0,
		"/home/u/.ssh/id_ed25519":         0,
		"/home/u/.sshx/id":                -1,
		"/home/u":                         -1,
		"/w/.env":                         3,
		"/w/.env/inside":                  3,
		"/w/.envrc":                       -1,
		"/w/.env.local":                   4,
		"/w/cert.pem":                     5,
		"/w/cert.pem.txt":                 -1,
		"/w/a/secrets/b/c.go":             7,
		"/w/a/secret/b/c.go":              -1,
		"/usr/local/go/src/net/http/x.go": -1,
		"/":                               -1,
	} {
		if got := m.First(p); got != want {
			t.Errorf("%s: %d, want %d", p, got, want)
		}
	}
	if !m.MayApplyBeneath("/home/u/.aws/config") || !m.MayApplyBeneath("/home") || m.MayApplyBeneath("/w/x") {
		t.Error("mayApplyBeneath: the anchored trees are /home/u/.ssh, .aws and .gnupg")
	}
}

// FuzzDenyMatcher: any glob list and path, the same verdict as the
// globs in turn.
func FuzzDenyMatcher(f *testing.F) {
	f.Add("**/*.pem\n/a/**/b\n**/.env.*", "/x/a/y/b/c")
	f.Add("**\n*", "/")
	f.Add("/a/[b/**", "/a/[b/c")
	f.Fuzz(func(t *testing.T, list, p string) {
		var globs []string
		for _, g := range strings.Split(list, "\n") {
			globs = append(globs, g)
		}
		if got, want := NewMatcher(globs).First(p), oldFirst(globs, p); got != want {
			t.Fatalf("globs %q, path %q: matcher says %d, the globs in turn %d", globs, p, got, want)
		}
	})
}
