package cli

import (
	"slices"
	"testing"
)

func TestSuggestFlags(t *testing.T) {
	root := NewCmdRoot(&App{})
	tests := []struct {
		cmd, typed string
		want       []string
	}{
		{"edit", "old-text", []string{"--old"}},
		{"edit", "new-text", []string{"--new"}},
		{"edit", "replace", []string{"--replace-all"}},
		{"edit", "ifmatch", []string{"--if-match"}},
		{"write", "dryrun", []string{"--dry-run"}},
		{"write", "mkdirs", []string{"--mkdir"}},
		{"ls", "recurse", []string{"--recursive"}},
		{"ls", "bogus", nil},
		{"read", "x", nil},
	}
	for _, tc := range tests {
		t.Run(tc.cmd+" --"+tc.typed, func(t *testing.T) {
			c, _, err := root.Find([]string{tc.cmd})
			if err != nil {
				t.Fatal(err)
			}
			if got := suggestFlags(c, tc.typed); !slices.Equal(got, tc.want) {
				t.Errorf("suggestFlags(%s, %q) = %q, want %q", tc.cmd, tc.typed, got, tc.want)
			}
		})
	}
}

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"dryrun", "dry-run", 1},
		{"raed", "read", 2}, {"kitten", "sitting", 3},
	} {
		if got := levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
