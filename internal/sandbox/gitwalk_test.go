package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGitDirs: the guard's walk finds git directories by what they hold,
// whatever their name, through .git files and symlinks, a worktree's
// commondir, and the submodules and worktrees inside a repository; it
// never walks into one otherwise, and names a root it did not finish.
func TestGitDirs(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	gitDir := func(dir string, extra ...string) {
		for _, f := range append([]string{"HEAD"}, extra...) {
			p := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("ref: refs/heads/main\n"), 0o644)
		}
		os.MkdirAll(filepath.Join(dir, "objects"), 0o755)
		os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
	}
	gitDir(filepath.Join(ws, ".git"))
	gitDir(filepath.Join(ws, ".git/modules/s"))
	os.MkdirAll(filepath.Join(ws, ".git/worktrees/w"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git/worktrees/w/HEAD"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git/worktrees/w/commondir"), []byte("../..\n"), 0o644)
	gitDir(filepath.Join(ws, "vendor/p.git"))
	// A folder made to look like a git directory does not hide a
	// repository beneath it; a git directory's own parts are not walked.
	gitDir(filepath.Join(ws, "fake"))
	gitDir(filepath.Join(ws, "fake/deeper/.git"))
	gitDir(filepath.Join(ws, ".git/objects/xx"))
	gitDir(filepath.Join(outside, "far"))
	os.MkdirAll(filepath.Join(ws, "a"), 0o755)
	os.WriteFile(filepath.Join(ws, "a/.git"), []byte("gitdir: "+filepath.Join(outside, "far")+"\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "b"), 0o755)
	os.Symlink(filepath.Join(outside, "far"), filepath.Join(ws, "b/.git"))
	os.MkdirAll(filepath.Join(ws, "c"), 0o755)
	os.WriteFile(filepath.Join(ws, "c/.git"), []byte("gitdir: ../nowhere\n"), 0o644)
	// A fifo where a .git file would be: the walk must not block on it.
	os.MkdirAll(filepath.Join(ws, "d"), 0o755)
	if err := unix.Mkfifo(filepath.Join(ws, "d/.git"), 0o644); err != nil {
		t.Fatal(err)
	}

	dirs, partial := GitDirs([]Root{{Path: ws, Origin: "cwd"}, {Path: outside, Origin: "tmp"}})
	want := []string{filepath.Join(outside, "far"), filepath.Join(ws, ".git"), filepath.Join(ws, ".git/modules/s"),
		filepath.Join(ws, "fake"), filepath.Join(ws, "fake/deeper/.git"),
		filepath.Join(ws, ".git/worktrees/w"), filepath.Join(ws, "vendor/p.git")}
	slices.Sort(want)
	if !slices.Equal(dirs, want) {
		t.Errorf("GitDirs:\n%s\nwant:\n%s", strings.Join(dirs, "\n"), strings.Join(want, "\n"))
	}
	if len(partial) > 0 {
		t.Errorf("partial %q", partial)
	}

	defer func(b int) { walkBudget = b }(walkBudget)
	walkBudget = 3
	if _, partial := GitDirs([]Root{{Path: ws, Origin: "cwd"}}); !slices.Contains(partial, ws) {
		t.Errorf("past the budget, partial = %q, want %s in it", partial, ws)
	}
}
