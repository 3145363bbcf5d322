package pathmatch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitDirLayouts are folders, in the layout notation, each with whether git
// takes it for a git directory. One table serves every rule about git
// directories: IsGitDir reads it directly, and CompletesGitDir must agree
// with it for every part a write could add (see TestCompletesGitDir).
var gitDirLayouts = []struct {
	name   string
	layout []string // under the folder r
	gitDir bool
}{
	{name: "empty"},
	{name: "HEAD alone", layout: []string{"r/HEAD"}},
	{name: "objects and refs", layout: []string{"r/objects/", "r/refs/"}},
	{name: "HEAD and objects", layout: []string{"r/HEAD", "r/objects/"}},
	{name: "HEAD and refs", layout: []string{"r/HEAD", "r/refs/"}},
	{name: "HEAD, objects, refs", layout: []string{"r/HEAD", "r/objects/", "r/refs/"}, gitDir: true},
	{name: "HEAD and commondir", layout: []string{"r/HEAD", "r/commondir"}, gitDir: true},
	{name: "commondir alone", layout: []string{"r/commondir"}},
	{name: "parts as files", layout: []string{"r/HEAD", "r/objects", "r/refs"}, gitDir: true},
	{name: "parts as symlinks", layout: []string{"r/HEAD => nowhere", "r/objects => nowhere", "r/refs => nowhere"}, gitDir: true},
	{name: "parts one level down", layout: []string{"r/sub/HEAD", "r/sub/objects/", "r/sub/refs/"}},
	{name: "lowercase head", layout: []string{"r/head", "r/objects/", "r/refs/"}},
}

func TestIsGitDir(t *testing.T) {
	for _, tc := range gitDirLayouts {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, "r/")
			makeLayout(t, root, tc.layout...)
			if got := IsGitDir(filepath.Join(root, "r")); got != tc.gitDir {
				t.Errorf("IsGitDir = %v, want %v", got, tc.gitDir)
			}
		})
	}
}

// TestCompletesGitDir: writing a part (or something beneath it) at the top
// of r completes a git directory exactly when r with that part added is
// one, by the table above; a name that is no part never does.
func TestCompletesGitDir(t *testing.T) {
	for _, tc := range gitDirLayouts {
		for _, part := range append(append([]string{}, GitDirParts...), "config", "hooks") {
			for _, rel := range []string{part, filepath.Join(part, "x")} {
				t.Run(tc.name+"/"+rel, func(t *testing.T) {
					root := tempRoot(t)
					makeLayout(t, root, "r/")
					makeLayout(t, root, tc.layout...)
					r := filepath.Join(root, "r")
					got := CompletesGitDir(r, rel)
					if _, err := os.Lstat(filepath.Join(r, part)); os.IsNotExist(err) {
						makeLayout(t, root, "r/"+part)
					}
					want := IsGitDir(r)
					if !slices.Contains(GitDirParts, part) {
						want = false
					}
					if got != want {
						t.Errorf("CompletesGitDir(r, %q) = %v; r with %s added is a git directory: %v", rel, got, part, want)
					}
				})
			}
		}
	}
}

// TestGitProtectedIn: a git directory recognized by what it holds, or a
// folder named .git, protects its code-running parts and nothing else.
func TestGitProtectedIn(t *testing.T) {
	repo := []string{"ws/x.git/HEAD", "ws/x.git/objects/", "ws/x.git/refs/"}
	for _, tc := range []struct {
		name   string
		layout []string
		target string // under the temp root
		root   string
		want   string // "" when not protected
	}{
		{name: "plain folder", layout: []string{"ws/d/"}, root: "ws", target: "ws/d/f"},
		{name: "a repository's hook", layout: repo, root: "ws", target: "ws/x.git/hooks/pre-commit", want: "ws/x.git"},
		{name: "a repository's config", layout: repo, root: "ws", target: "ws/x.git/config", want: "ws/x.git"},
		{name: "a repository's index", layout: repo, root: "ws", target: "ws/x.git/index"},
		{name: "a repository's objects", layout: repo, root: "ws", target: "ws/x.git/objects/ab/cdef"},
		{name: "a repository's alternates", layout: repo, root: "ws", target: "ws/x.git/objects/info/alternates", want: "ws/x.git"},
		{name: "a worktree's gitdir's commondir", layout: []string{"ws/wt/HEAD", "ws/wt/commondir"}, root: "ws", target: "ws/wt/commondir", want: "ws/wt"},
		{name: "a worktree's gitdir's data", layout: []string{"ws/wt/HEAD", "ws/wt/commondir"}, root: "ws", target: "ws/wt/a/b"},
		{name: "the root is one", layout: []string{"ws/HEAD", "ws/objects/", "ws/refs/"}, root: "ws", target: "ws/config", want: "ws"},
		{name: "the root is one, its data", layout: []string{"ws/HEAD", "ws/objects/", "ws/refs/"}, root: "ws", target: "ws/f"},
		{name: "above the root is not looked at", layout: []string{"HEAD", "objects/", "refs/", "ws/"}, root: "ws", target: "ws/config"},
		{name: "the repository itself", layout: repo, root: "ws", target: "ws/x.git", want: "ws/x.git"},
		{name: ".git by name, empty", layout: []string{"ws/.git/"}, root: "ws", target: "ws/.git/config", want: "ws/.git"},
		{name: ".git by name, not there yet", layout: []string{"ws/"}, root: "ws", target: "ws/a/.git/hooks/x", want: "ws/a/.git"},
		{name: ".git by name, its data", layout: []string{"ws/.git/"}, root: "ws", target: "ws/.git/COMMIT_EDITMSG"},
		{name: "an entry named .git", layout: []string{"ws/"}, root: "ws", target: "ws/sub/.git", want: "ws/sub/.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := tempRoot(t)
			makeLayout(t, tmp, tc.layout...)
			root, target := filepath.Join(tmp, tc.root), filepath.Join(tmp, tc.target)
			rel, _ := Within(root, target)
			dir, ok := GitProtectedIn(rel, target, nil)
			want := ""
			if tc.want != "" {
				want = filepath.Join(tmp, tc.want)
			}
			if ok != (want != "") || dir != want {
				t.Errorf("GitProtectedIn = %q, %v; want %q", dir, ok, want)
			}
		})
	}
}

// TestGitProtectedPart is the table of docs/design.md §4 step 5: what in
// a git directory runs code or redirects git, at any nesting.
func TestGitProtectedPart(t *testing.T) {
	protected := []string{"config", "config.worktree", "hooks", "hooks/pre-commit", "commondir",
		"info/attributes", "objects/info/alternates", "objects/info/http-alternates",
		"worktrees/w/commondir", "worktrees/w/gitdir", "worktrees/w/config.worktree", "worktrees/w/hooks/x",
		"modules/m/config", "modules/m/hooks/post-checkout", "modules/a/b/config", "modules/m/worktrees/w/commondir",
		"modules/m/modules/n/config", "config/x"}
	writable := []string{".", "", "index", "index.lock", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "packed-refs", "COMMIT_EDITMSG",
		"objects/ab/cdef", "objects/pack/pack-1.pack", "objects/info/packs", "refs/heads/main", "refs/heads/config",
		"logs/HEAD", "rebase-merge/done", "info/exclude", "info/sparse-checkout", "worktrees/w/HEAD", "worktrees/w/index",
		"worktrees/w", "modules/m/index", "modules/m/refs/heads/config", "modules/m/objects/ab/config", "config.lock",
		"hooks.txt", "description", "shallow"}
	for _, rel := range protected {
		if !GitProtectedPart(rel) {
			t.Errorf("GitProtectedPart(%q) = false, want protected", rel)
		}
	}
	for _, rel := range writable {
		if GitProtectedPart(rel) {
			t.Errorf("GitProtectedPart(%q) = true, want writable", rel)
		}
	}
}

func TestReadGitdir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string // "" with dir: .git is a folder
		dir     bool
		want    string
		ok      bool
	}{
		{name: "pointer", content: "gitdir: ../real\n", want: "../real", ok: true},
		{name: "no newline, spaces", content: "gitdir:   /abs/path  ", want: "/abs/path", ok: true},
		{name: "second line ignored", content: "gitdir: a\ngitdir: b\n", want: "a", ok: true},
		{name: "no prefix", content: "../real\n"},
		{name: "empty target", content: "gitdir: \n"},
		{name: "empty file", content: ""},
		{name: "too large", content: "gitdir: x\n" + strings.Repeat("#", 5000)},
		{name: "a folder", dir: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			dotgit := filepath.Join(root, ".git")
			if tc.dir {
				makeLayout(t, root, ".git/")
			} else if err := os.WriteFile(dotgit, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := ReadGitdir(dotgit)
			if ok != tc.ok || ok && got != tc.want {
				t.Errorf("ReadGitdir = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestReadCommondir(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "wt/", "plain/", "empty/")
	if err := os.WriteFile(filepath.Join(root, "wt/commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "empty/commondir"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"wt": "../..", "plain": "", "empty": ""} {
		got, ok := ReadCommondir(filepath.Join(root, dir))
		if got != want || ok != (want != "") {
			t.Errorf("ReadCommondir(%s) = %q, %v; want %q", dir, got, ok, want)
		}
	}
}
