//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestWalkIdentities walks the trees of anchored globs and checks what
// it collects (files with several links that the glob covers, nothing
// through a symlink), where it looks (only where the glob could match:
// a budget too small for the whole tree is enough), and that a tree too
// large for the budget is reported cut.
func TestWalkIdentities(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string
		links  []string // files given a second link beside the tree
		glob   string   // "$ROOT" expanded
		budget int
		want   []string // the linked files collected
		cut    bool
	}{
		{name: "linked files only", layout: []string{"sec/a", "sec/b", "sec/sub/c"}, links: []string{"sec/a", "sec/sub/c"},
			glob: "$ROOT/sec/**", budget: 100, want: []string{"sec/a", "sec/sub/c"}},
		{name: "folder entry", layout: []string{"sec/a", "sec/sub/c"}, links: []string{"sec/sub/c"},
			glob: "$ROOT/sec", budget: 100, want: []string{"sec/sub/c"}},
		{name: "file glob", layout: []string{"sec/a.key", "sec/a.txt"}, links: []string{"sec/a.key", "sec/a.txt"},
			glob: "$ROOT/sec/*.key", budget: 100, want: []string{"sec/a.key"}},
		{name: "the glob's file itself", layout: []string{"etc/shadow"}, links: []string{"etc/shadow"},
			glob: "$ROOT/etc/shadow", budget: 1, want: []string{"etc/shadow"}},
		{name: "missing tree", glob: "$ROOT/nope/**", budget: 100},
		{name: "no symlink followed", layout: []string{"other/k", "sec/l => ../other"}, links: []string{"other/k"},
			glob: "$ROOT/sec/**", budget: 100},
		{name: "folders the glob cannot match are not walked", layout: append([]string{"sec/app/token"}, manyFiles("sec/big/", 50)...),
			links: []string{"sec/app/token"}, glob: "$ROOT/sec/a*/token", budget: 5, want: []string{"sec/app/token"}},
		{name: "a tree past the budget is cut", layout: manyFiles("sec/", 50), links: []string{"sec/f00"},
			glob: "$ROOT/sec/**", budget: 10, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, tc.layout...)
			makeLayout(t, root, "links/")
			for i, l := range tc.links {
				if err := os.Link(filepath.Join(root, l), filepath.Join(root, "links", fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			glob := expandRoot(tc.glob, root)
			ids := walkIdentities([]denyGlob{{glob, glob}}, tc.budget)
			if (ids.cut != "") != tc.cut {
				t.Errorf("cut %q, want cut %v", ids.cut, tc.cut)
			}
			if tc.cut {
				return
			}
			got := map[fileID]bool{}
			for id, shown := range ids.ids {
				got[id] = true
				if shown != glob {
					t.Errorf("shown %q, want %q", shown, glob)
				}
			}
			for _, w := range tc.want {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(root, w), &st); err != nil {
					t.Fatal(err)
				}
				if !got[fileID{uint64(st.Dev), uint64(st.Ino)}] {
					t.Errorf("%s not collected", w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("collected %d files, want %d (%v)", len(got), len(tc.want), tc.want)
			}
		})
	}
}

// manyFiles is n file entries in the layout notation, under dir.
func manyFiles(dir string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%sf%02d", dir, i))
	}
	return out
}

// TestDeniedIdentityCut: a file with several links is denied when the
// trees were too large to compare it with, with the reason in the
// denial; a file with one link is not.
func TestDeniedIdentityCut(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, manyFiles("big/", 10)...)
	f := readFence(t, root, "$ROOT/big/**")
	f.idBudget = 3
	if err := os.Link(filepath.Join(root, "ws/f"), filepath.Join(root, "ws/f2")); err != nil {
		t.Fatal(err)
	}
	target, err := f.Resolve("f")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.OpenRead("read", target)
	if de := deniedAs(t, err); !strings.Contains(de.Matched, "several links") {
		t.Errorf("denial %+v", de)
	}
	target, err = f.Resolve("d/g")
	if err != nil {
		t.Fatal(err)
	}
	file, err := f.OpenRead("read", target)
	if err != nil {
		t.Fatalf("a file with one link: %v", err)
	}
	file.Close()
}

// TestDeniedSessionIdentity: inside a session the deny_read files are
// hidden, so the fence cannot find them; the identities the record
// carries (Policy.DenyIdentities) deny a file that has one, whatever its
// name and number of links, with the record's glob, and no other.
func TestDeniedSessionIdentity(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, "ws/f"), &st); err != nil {
		t.Fatal(err)
	}
	makeLayout(t, root, "home/")
	p := testPolicy(root, policy.WorkspaceWrite)
	p.DenyRead = []string{"**/.env"}
	p.DenyIdentities = []policy.DenyIdentity{{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Glob: "~/.ssh/**"}}
	f := NewFence(p)
	target, err := f.Resolve("f")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.OpenRead("read", target)
	if de := deniedAs(t, err); de.Matched != "~/.ssh/**" || de.Reason != policy.ReasonDenyRead {
		t.Errorf("denial %+v", de)
	}
	target, err = f.Resolve("d/g")
	if err != nil {
		t.Fatal(err)
	}
	file, err := f.OpenRead("read", target)
	if err != nil {
		t.Fatalf("a file of another identity: %v", err)
	}
	file.Close()
}
