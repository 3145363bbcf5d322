package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// canonLayout is the tree every Canonical case starts from: the base
// folder ws, and a folder out beside it that no write may reach.
var canonLayout = []string{
	"ws/",
	"ws/f",
	"ws/d/",
	"ws/d/g",
	"out/",
	"out/x",
	"out/sub/",
	"out/sub/y",
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string // added to canonLayout
		path   string   // "$ROOT" is the temp root; relative paths are taken from $ROOT/ws
		want   string   // relative to $ROOT, or absolute when it starts with "/"
		code   fserr.Code
	}{
		{name: "plain file", path: "f", want: "ws/f"},
		{name: "absolute file", path: "$ROOT/ws/f", want: "ws/f"},
		{name: "base itself", path: "$ROOT/ws", want: "ws"},
		{name: "folder", path: "d", want: "ws/d"},
		{name: "missing file", path: "new", want: "ws/new"},
		{name: "missing rest appended", path: "d/new/deeper/file", want: "ws/d/new/deeper/file"},
		{name: "dotdot inside", path: "d/../f", want: "ws/f"},
		{name: "dotdot out", path: "../out/x", want: "out/x"},
		{name: "dotdot out twice", path: "../../" + "ROOTNAME" + "/out", want: "out"},
		{name: "a/../b", path: "d/../new", want: "ws/new"},
		{name: "dotdot above slash", path: "/../../..", want: "/"},
		{name: "slash", path: "/", want: "/"},
		{name: "link/.. is the parent of the target", layout: []string{"ws/link => ../out/sub"}, path: "link/..", want: "out"},
		{name: "link/../x", layout: []string{"ws/link => ../out/sub"}, path: "link/../x", want: "out/x"},
		{name: "link in subfolder to its parent", layout: []string{"ws/d/up => .."}, path: "d/up/f", want: "ws/f"},
		{name: "link to parent then dotdot", layout: []string{"ws/d/up => .."}, path: "d/up/..", want: "."},
		{name: "relative symlink out", layout: []string{"ws/rel => ../out/x"}, path: "rel", want: "out/x"},
		{name: "absolute symlink out", layout: []string{"ws/abs => $ROOT/out/x"}, path: "abs", want: "out/x"},
		{name: "absolute symlink inside", layout: []string{"ws/abs => $ROOT/ws/d"}, path: "abs/g", want: "ws/d/g"},
		{name: "relative symlink inside", layout: []string{"ws/rel => d"}, path: "rel/g", want: "ws/d/g"},
		{name: "symlink to slash", layout: []string{"ws/root => /"}, path: "root/..", want: "/"},
		{name: "target with dotdot", layout: []string{"ws/d/l => ../d/../f"}, path: "d/l", want: "ws/f"},
		{name: "chain", layout: []string{"ws/a => b", "ws/b => c", "ws/c"}, path: "a", want: "ws/c"},
		{name: "chain across folders", layout: []string{"ws/a => d/b", "ws/d/b => ../../out/c", "out/c => sub"}, path: "a/y", want: "out/sub/y"},
		{name: "loop", layout: []string{"ws/a => b", "ws/b => a"}, path: "a", code: fserr.IO},
		{name: "loop in the middle", layout: []string{"ws/a => b", "ws/b => a"}, path: "d/../a/x", code: fserr.IO},
		{name: "self loop", layout: []string{"ws/self => self"}, path: "self", code: fserr.IO},
		{name: "self loop through dot", layout: []string{"ws/self => ./self"}, path: "self/x", code: fserr.IO},
		{name: "dangling symlink outside", layout: []string{"ws/dang => ../out/nothere"}, path: "dang", want: "out/nothere"},
		{name: "dangling symlink outside, deeper", layout: []string{"ws/dang => ../out/nothere"}, path: "dang/a/b", want: "out/nothere/a/b"},
		{name: "dangling absolute symlink", layout: []string{"ws/dang => $ROOT/out/none/y"}, path: "dang", want: "out/none/y"},
		{name: "dangling symlink then dotdot", layout: []string{"ws/dang => ../out/none/y"}, path: "dang/../z", want: "out/none/z"},
		{name: "dangling chain", layout: []string{"ws/a => b", "ws/b => ../out/gone"}, path: "a", want: "out/gone"},
		{name: "symlink in the middle", layout: []string{"ws/mid => ../out"}, path: "mid/sub/y", want: "out/sub/y"},
		{name: "symlink in the middle, missing rest", layout: []string{"ws/d/mid => ../../out/sub"}, path: "d/mid/new/z", want: "out/sub/new/z"},
		{name: "proc self root", path: "/proc/self/root$ROOT/ws/f", want: "ws/f"},
		{name: "proc self root missing", path: "/proc/self/root$ROOT/ws/new", want: "ws/new"},
		{name: "trailing slash folder", path: "d/", want: "ws/d"},
		{name: "trailing slashes missing", path: "new//", want: "ws/new"},
		{name: "trailing slash file", path: "f/", want: "ws/f"},
		{name: "dot", path: ".", want: "ws"},
		{name: "dot slash", path: "./f", want: "ws/f"},
		{name: "dot in the middle", path: "d/./g", want: "ws/d/g"},
		{name: "dot after missing", path: "new/./z", want: "ws/new/z"},
		{name: "doubled separators", path: "d//g", want: "ws/d/g"},
		{name: "doubled separators absolute", path: "/$ROOT//ws///d", want: "ws/d"},
		{name: "empty", path: "", code: fserr.InvalidArgument},
		{name: "nul byte", path: "f\x00", code: fserr.InvalidArgument},
		{name: "nul byte in the middle", path: "d/\x00/g", code: fserr.InvalidArgument},
		{name: "file as folder", path: "f/x", code: fserr.NotDir},
		{name: "file as folder, dot", path: "f/.", code: fserr.NotDir},
		{name: "file as folder, dotdot", path: "f/..", code: fserr.NotDir},
		{name: "link to file as folder", layout: []string{"ws/lf => f"}, path: "lf/x", code: fserr.NotDir},
		{name: "missing then dotdot", path: "missing/../f", want: "ws/f"},
		{name: "missing then dotdot out", path: "missing/../../out/x", want: "out/x"},
		{name: "missing then dotdot through link", layout: []string{"ws/link => ../out/sub"}, path: "missing/../link/y", want: "out/sub/y"},
		{name: "missing twice then dotdot twice", path: "m1/m2/../../d/g", want: "ws/d/g"},
		{name: "trailing space", path: "f ", want: "ws/f "},
		{name: "quotes", path: `"f"`, want: `ws/"f"`},
	} {
		eachWalk(t, tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, canonLayout...)
			makeLayout(t, root, tc.layout...)
			base := filepath.Join(root, "ws")
			path := strings.ReplaceAll(tc.path, "$ROOT", root)
			path = strings.ReplaceAll(path, "ROOTNAME", filepath.Base(root))
			got, err := Canonical(base, path)
			if tc.code != "" {
				if err == nil {
					t.Fatalf("Canonical(%q) = %q, want error %s", path, got, tc.code)
				}
				if c := fserr.CodeOf(err); c != tc.code {
					t.Fatalf("Canonical(%q) error %v has code %s, want %s", path, err, c, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Canonical(%q): %v", path, err)
			}
			want := tc.want
			if !filepath.IsAbs(want) {
				want = filepath.Join(root, want)
			}
			if got != want {
				t.Errorf("Canonical(%q) = %q, want %q", path, got, want)
			}
			checkCanonShape(t, got)
			full := path
			if !filepath.IsAbs(full) {
				full = base + "/" + full
			}
			if _, err := os.Stat(full); err == nil {
				ev, err := filepath.EvalSymlinks(full)
				if err != nil {
					t.Fatalf("EvalSymlinks(%q): %v", full, err)
				}
				if got != ev {
					t.Errorf("Canonical(%q) = %q, but EvalSymlinks says %q", path, got, ev)
				}
			}
		})
	}
}

// TestLinksOn: the links a path's resolution follows, each named by its
// own canonical path, in the order met, through folders that are links
// and chains, dangling or looping; none where the path has no link.
func TestLinksOn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string
		path   string
		want   []string // relative to $ROOT
	}{
		{name: "no link", path: "d/g"},
		{name: "missing", path: "d/new/x"},
		{name: "the last", layout: []string{"ws/l => d"}, path: "l", want: []string{"ws/l"}},
		{name: "in the middle", layout: []string{"ws/mid => ../out"}, path: "mid/sub/y", want: []string{"ws/mid"}},
		{name: "chain across folders", layout: []string{"ws/a => d/b", "ws/d/b => ../../out/c", "out/c => sub"},
			path: "a/y", want: []string{"ws/a", "ws/d/b", "out/c"}},
		{name: "reached through a link", layout: []string{"ws/in => d", "ws/d/l => ../f"}, path: "in/l", want: []string{"ws/in", "ws/d/l"}},
		{name: "dangling", layout: []string{"ws/dang => gone"}, path: "dang/x", want: []string{"ws/dang"}},
		{name: "loop", layout: []string{"ws/a => b", "ws/b => a"}, path: "a",
			want: slices.Repeat([]string{"ws/a", "ws/b"}, maxSymlinkHops/2)},
	} {
		eachWalk(t, tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, canonLayout...)
			makeLayout(t, root, tc.layout...)
			var want []string
			for _, w := range tc.want {
				want = append(want, filepath.Join(root, w))
			}
			if got := LinksOn(filepath.Join(root, "ws"), tc.path); !slices.Equal(got, want) {
				t.Errorf("LinksOn(%q) = %q, want %q", tc.path, got, want)
			}
		})
	}
}

// checkCanonShape checks what every canonical path is: absolute and clean.
func checkCanonShape(t testing.TB, p string) {
	t.Helper()
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		t.Errorf("canonical path %q is not absolute and clean", p)
	}
}

// TestCanonicalHops pins the symlink budget to the kernel's: a chain of 40
// links resolves, one of 41 is a loop (FS_IO), as open(2) says ELOOP.
func TestCanonicalHops(t *testing.T) {
	for _, tc := range []struct {
		links int
		code  fserr.Code
	}{
		{links: 40},
		{links: 41, code: fserr.IO},
	} {
		t.Run(fmt.Sprint(tc.links), func(t *testing.T) {
			root := tempRoot(t)
			layout := []string{"end"}
			for i := range tc.links {
				next := "end"
				if i+1 < tc.links {
					next = fmt.Sprintf("l%d", i+1)
				}
				layout = append(layout, fmt.Sprintf("l%d => %s", i, next))
			}
			makeLayout(t, root, layout...)
			got, err := Canonical(root, "l0")
			_, kerr := os.Stat(filepath.Join(root, "l0"))
			if tc.code != "" {
				if fserr.CodeOf(err) != tc.code {
					t.Fatalf("Canonical(l0) = %q, %v; want code %s", got, err, tc.code)
				}
				if kerr == nil {
					t.Errorf("the kernel resolves a chain of %d links, Canonical refuses it", tc.links)
				}
				return
			}
			if err != nil || got != filepath.Join(root, "end") {
				t.Fatalf("Canonical(l0) = %q, %v; want %s", got, err, filepath.Join(root, "end"))
			}
			if kerr != nil {
				t.Errorf("Canonical resolves a chain of %d links, the kernel refuses it: %v", tc.links, kerr)
			}
		})
	}
}

// TestPrefixResolverIsCanonical: the deny_read prefixes, resolved with
// their folders shared, are what Canonical makes of each, one resolver for
// them all (so that a folder resolved for one serves the next) and a
// fresh one for each; where Canonical fails, so does the resolver.
func TestPrefixResolverIsCanonical(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, canonLayout...)
	makeLayout(t, root,
		"home/",
		"home/.ssh => ../out/sub",
		"home/.gnupg/",
		"home/.netrc",
		"homelink => home",
		"ws/dang => ../out/none",
		"ws/loop => loop",
	)
	var paths []string
	for _, p := range []string{
		"home/.ssh", "home/.aws", "home/.gnupg", "home/.netrc", "home/.netrc/x",
		"homelink/.ssh", "homelink/.aws", "homelink/.gnupg",
		"home/missing/deeper", "home/missing/deeper2", "home/..", "home/.", "home/../out/x",
		"ws/dang", "ws/dang/x", "ws/loop", "ws/loop/x", "ws/d/../f",
	} {
		paths = append(paths, filepath.Join(root, p))
	}
	paths = append(paths, "/", "/proc/self/root"+root+"/home/.ssh")
	base := filepath.Join(root, "ws")
	shared := prefixResolver{cwd: base}
	for _, p := range paths {
		want, err := Canonical(base, p)
		for _, r := range []*prefixResolver{&shared, {cwd: base}} {
			got, ok := r.canonical(p)
			if ok != (err == nil) || got != want {
				t.Errorf("canonical(%q) = %q, %v; Canonical %q, %v", p, got, ok, want, err)
			}
		}
	}
	if _, ok := shared.folders[filepath.Join(root, "home")]; !ok {
		t.Errorf("the home folder was not resolved once for its prefixes: %v", shared.folders)
	}
}

// TestCanonicalGlobSharedPrefix: a glob keeps its wildcard components
// after its resolved prefix, and one with no absolute prefix is returned
// as given.
func TestCanonicalGlobSharedPrefix(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "real/", "real/.ssh/", "home => real")
	r := prefixResolver{cwd: root}
	for g, want := range map[string]string{
		root + "/home/.ssh/**":   root + "/real/.ssh/**",
		root + "/home/.aws/**":   root + "/real/.aws/**",
		root + "/home/*/id_*":    root + "/real/*/id_*",
		"**/secrets/**":          "**/secrets/**",
		"/**/x":                  "/**/x",
		root + "/real/.ssh/id_*": root + "/real/.ssh/id_*",
	} {
		if got := r.canonicalGlob(g); got != want {
			t.Errorf("canonicalGlob(%q) = %q, want %q", g, got, want)
		}
	}
}
