package fsops

import (
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/search"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestSearchKeepsDenyRead: under deny_read, grep never matches and find
// never lists what it hides, by any way in (a folder walked with
// everything included, a glob that names the file, the path given, a
// symlink to it, a path through ".."): the walk counts it in Hidden, and
// a path given is FS_SANDBOX_DENIED. The control runs the same searches
// without the session file, where the hidden words are found, so the
// test can tell a hidden file from one the tree never held. (The
// symlink leak itself is listed by find, as a symlink: a name, never
// followed.)
func TestSearchKeepsDenyRead(t *testing.T) {
	dir, session := searchTree(t)
	for _, tc := range []struct {
		name    string
		session string
		hidden  bool
	}{
		{"deny_read", session, true},
		{"control: no deny_read", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.Open(sandbox.Options{Dir: dir, ConfigFile: tc.session})
			if err != nil {
				t.Fatal(err)
			}
			everything := &GrepOptions{NoIgnore: true, Limit: 1000}
			var seen []string
			for _, opt := range []*GrepOptions{everything, {NoIgnore: true, Globs: []string{".env", "key.txt"}}, {Files: true, NoIgnore: true}} {
				g, err := Grep(sb, "TODO", nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range g.Matches {
					seen = append(seen, m.Path+": "+m.Text)
				}
				for _, f := range g.Files {
					seen = append(seen, f.Path)
				}
				if tc.hidden && g.Hidden == 0 {
					t.Errorf("grep %+v: nothing counted hidden", *opt)
				}
			}
			f, err := Find(sb, "**", "", &FindOptions{NoIgnore: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range f.Entries {
				seen = append(seen, e.Path)
			}
			if tc.hidden && f.Hidden != 2 {
				t.Errorf("find: hidden %d, want 2 (.env, secret)", f.Hidden)
			}
			leaked := slices.ContainsFunc(seen, func(s string) bool {
				return strings.HasPrefix(s, ".env") || strings.HasPrefix(s, "secret") ||
					strings.Contains(s, "the secret") || strings.Contains(s, "the key")
			})
			if leaked == tc.hidden {
				t.Errorf("a hidden path or its words seen: %v, want %v, in %q", leaked, !tc.hidden, seen)
			}

			for _, p := range []string{".env", "secret", "secret/key.txt", "leak", "src/../secret/key.txt", dir + "/.env"} {
				_, err := Grep(sb, "TODO", []string{"src", p}, nil)
				if code := sandbox.Code(err); tc.hidden && code != sandbox.CodeDenied || !tc.hidden && err != nil {
					t.Errorf("grep %s: code %q (%v)", p, code, err)
				}
			}
			for _, p := range []string{"secret", dir + "/secret", "src/../secret"} {
				_, err := Find(sb, "*", p, nil)
				if code := sandbox.Code(err); tc.hidden && code != sandbox.CodeDenied || !tc.hidden && err != nil {
					t.Errorf("find %s: code %q (%v)", p, code, err)
				}
			}
		})
	}
}

// TestSearchDefaultsAsDocumented: the bounds GrepOptions and FindOptions
// document for 0 are the command's flags' defaults, which call.go takes.
func TestSearchDefaultsAsDocumented(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"grep --limit", search.DefaultGrepLimit, 200},
		{"find --limit", search.DefaultFindLimit, 1000},
		{"--max-bytes", search.DefaultSearchMaxBytes, 64 << 10},
		{"--max-line-bytes", search.DefaultMaxLineBytes, 512},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: the command's default is %d, the doc comment says %d", tc.name, tc.got, tc.want)
		}
	}
}
