package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Git-directory detection: a repository is recognized by what it holds,
// whatever it is called, and a write must not complete one at the top of
// a writable root (docs/design.md §4 step 5).

// isGitDir reports whether dir is a git directory: HEAD with objects/ and
// refs/ (a repository's .git, a bare repository, a submodule's module
// folder), or HEAD with a commondir file (a worktree's git folder).
func isGitDir(dir string) bool {
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// isGitDirAt is isGitDir for a folder already opened, as fd: it looks at
// what the folder holds, whatever name it has by now.
func isGitDirAt(fd int) bool {
	has := func(name string) bool {
		var st unix.Stat_t
		return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// insideGitDir reports the git directory, between root and target, that
// target lies in. It recognizes a repository by what it holds, whatever
// symlinks or names lead to it (".repo/projects/p.git", a worktree's
// commondir), where the protected globs only know the usual names.
func insideGitDir(root, target string) (string, bool) {
	for dir := filepath.Dir(target); ; dir = filepath.Dir(dir) {
		if _, ok := within(root, dir); !ok {
			return "", false
		}
		if isGitDir(dir) {
			return dir, true
		}
		if dir == root {
			return "", false
		}
	}
}

// gitDirParts are the entries whose presence together at the top of a
// folder make git treat it as a git directory.
var gitDirParts = []string{"HEAD", "objects", "refs", "commondir"}

// completesGitDir reports whether writing rel inside root would make the
// root a git directory (HEAD with objects/ and refs/, or HEAD with
// commondir): git run later outside any sandbox would take the root for a
// repository and honour a config planted there.
func completesGitDir(root, rel string) bool {
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	if !slices.Contains(gitDirParts, first) {
		return false // the common case costs no system call
	}
	return completesWith(first, func(p string) bool {
		_, err := os.Lstat(filepath.Join(root, p))
		return err == nil
	})
}

// completesGitDirAt is completesGitDir for the root opened as fd, when
// the write's first component is first.
func completesGitDirAt(fd int, first string) bool {
	return completesWith(first, func(p string) bool {
		var st unix.Stat_t
		return unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	})
}

// completesWith reports whether adding first to the parts that has finds
// makes a git directory.
func completesWith(first string, has func(string) bool) bool {
	present := map[string]bool{first: true}
	for _, p := range gitDirParts {
		if p != first {
			present[p] = has(p)
		}
	}
	return present["HEAD"] && (present["objects"] && present["refs"] || present["commondir"])
}

// readGitdir returns the target of a ".git" pointer file ("gitdir: …").
func readGitdir(dotgit string) (string, bool) {
	line, ok := firstLine(dotgit)
	gitdir, found := strings.CutPrefix(line, "gitdir:")
	gitdir = strings.TrimSpace(gitdir)
	return gitdir, ok && found && gitdir != ""
}

// readCommondir returns what a worktree gitdir's commondir file names.
func readCommondir(gitdir string) (string, bool) {
	line, ok := firstLine(filepath.Join(gitdir, "commondir"))
	return line, ok && line != ""
}

// firstLine returns the trimmed first line of a small regular file.
func firstLine(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	file, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer file.Close()
	line, _ := bufio.NewReader(file).ReadString('\n')
	return strings.TrimSpace(line), true
}
