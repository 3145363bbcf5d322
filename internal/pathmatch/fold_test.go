package pathmatch

import (
	"path"
	"runtime"
	"testing"
)

// TestFoldedDenyMatcher: where volumes are case-insensitive, the deny_read
// matcher covers every spelling that opens what a glob names (.ENV opens
// .env there); elsewhere it matches as spelled. The default is the OS's.
func TestFoldedDenyMatcher(t *testing.T) {
	if want := runtime.GOOS == "darwin" || runtime.GOOS == "windows"; foldCase != want || (Folded("A") == "a") != want {
		t.Fatalf("foldCase = %t on %s, want %t", foldCase, runtime.GOOS, want)
	}
	globs := []string{"**/.env", "/Users/a/.ssh", "**/*.pem", "**/Secret*"}
	for _, tc := range []struct {
		path          string
		folded, plain int
	}{
		{"/w/.env", 0, 0},
		{"/w/.ENV", 0, -1},
		{"/w/.Env/x", 0, -1},
		{"/USERS/A/.SSH/id_ed25519", 1, -1},
		{"/Users/a/.ssh/id_ed25519", 1, 1},
		{"/w/KEY.PEM", 2, -1},
		{"/w/secrets.txt", 3, -1},
		{"/w/Secrets.txt", 3, 3},
		{"/w/.envrc", -1, -1},
	} {
		for _, on := range []bool{true, false} {
			m := newMatcher(globs, on)
			want := tc.plain
			if on {
				want = tc.folded
			}
			if got := m.First(tc.path); got != want {
				t.Errorf("fold=%t: First(%q) = %d, want %d", on, tc.path, got, want)
			}
			dir, name := path.Dir(tc.path), path.Base(tc.path)
			if m.First(dir) < 0 {
				if got := m.Child(dir, name); got != want {
					t.Errorf("fold=%t: Child(%q, %q) = %d, want %d", on, dir, name, got, want)
				}
			}
		}
	}
	if !newMatcher([]string{"/Users/a/.ssh/**"}, true).MayApplyBeneath("/users/A") {
		t.Errorf("MayApplyBeneath: /users/A holds the tree of /Users/a/.ssh in any case")
	}
	if !newMatcher(globs, true).NameCandidate(".ENV") {
		t.Errorf("NameCandidate(.ENV) = false under **/.env")
	}
	if Covers(".git", ".GIT/hooks") || !Covers(folded(".git", true), folded(".GIT/hooks", true)) {
		t.Errorf("Covers matches as spelled; its callers fold both sides for a protect rule")
	}
}
