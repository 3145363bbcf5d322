package pathmatch

import (
	"testing"
)

func TestMatchCovers(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		// A folder entry covers what lies beneath it, as in gitignore.
		{"/home/u/.ssh", "/home/u/.ssh", true},
		{"/home/u/.ssh", "/home/u/.ssh/id_ed25519", true},
		{"/home/u/.ssh", "/home/u/.ssh/keys/old/id", true},
		{"/home/u/.ssh", "/home/u/.sshx/id", false},
		{"/home/u/.ssh", "/home/u", false},
		{"**/secret", "/ws/secret/key", true},
		{"**/secret", "/ws/a/secret/deep/key", true},
		{"**/secret", "/ws/secretary/key", false},
		{"**/secret", "/ws/my-secret/key", false},
		// A file glob covers a folder that happens to match it.
		{"**/*.pem", "/ws/certs.pem/inner", true},
		{"**/.env", "/ws/svc/.env", true},
		{"**/.env", "/ws/svc/.env.example", false},
		// "*" still matches one component, and what is under it.
		{"/s/*", "/s/a", true},
		{"/s/*", "/s/a/b", true},
		{"/s/*", "/s", false},
		// Globs ending in "**" behave as before.
		{"/s/**", "/s", true},
		{"/s/**", "/s/a/b", true},
		{"**", "/anything", true},
		// "**" in the middle.
		{"/a/**/k", "/a/k", true},
		{"/a/**/k", "/a/x/y/k/z", true},
		{"/a/**/k", "/a/x/y/kk", false},
		// A malformed pattern covers nothing.
		{"/a/[", "/a/[/b", false},
	} {
		if got := Covers(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
		// Whatever Match matches is covered.
		if Match(tc.pattern, tc.name) && !Covers(tc.pattern, tc.name) {
			t.Errorf("Match(%q, %q) but not Covers", tc.pattern, tc.name)
		}
	}
}

func TestMayCover(t *testing.T) {
	split := func(s string) []string { return Components(s) }
	for _, tc := range []struct {
		pattern, name string // the pattern relative to the walk's top
		want          bool
	}{
		{"", "a", true},       // the top is covered: all beneath
		{"**", "a/b/c", true}, // anything
		{"*/key", "a", true},  // a may hold key
		{"*/key", "a/key", true},
		{"*/key", "a/other", false}, // a file that cannot match, or a folder whose insides cannot
		{"a*/**", "b", false},
		{"a*/**", "ab/c/d", true},
		{"a/**/k", "a/x/y", true},
		{"a/**/k", "b", false},
		{"[", "a", false},
	} {
		if got := MayCover(split(tc.pattern), split(tc.name)); got != tc.want {
			t.Errorf("MayCover(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
		// MayCover never prunes what the pattern covers.
		if CoverParts(split(tc.pattern), split(tc.name)) && !MayCover(split(tc.pattern), split(tc.name)) {
			t.Errorf("MayCover(%q, %q) prunes a covered name", tc.pattern, tc.name)
		}
	}
}
