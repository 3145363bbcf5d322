package pathmatch

import (
	"bufio"
	"io/fs"
	"os"
	slash "path"
	"slices"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Git-directory detection: a repository is recognized by what it holds,
// whatever it is called, and a write must not complete one at the top of
// a writable root (docs/design.md §4 step 5).

// IsGitDir reports whether dir is a git directory: HEAD with objects/ and
// refs/ (a repository's .git, a bare repository, a submodule's module
// folder), or HEAD with a commondir file (a worktree's git folder).
func IsGitDir(dir string) bool {
	has := func(name string) bool {
		_, err := os.Lstat(fsys.ToOS(slash.Join(dir, name)))
		return err == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// IsGitDirAt is IsGitDir for a folder already opened, as fd: it looks at
// what the folder holds, whatever name it has by now.
func IsGitDirAt(fd int) bool {
	has := func(name string) bool {
		var st fsys.Stat_t
		return fsys.Fstatat(fd, name, &st, fsys.AT_SYMLINK_NOFOLLOW) == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// GitDirParts are the entries whose presence together at the top of a
// folder make git treat it as a git directory.
var GitDirParts = []string{"HEAD", "objects", "refs", "commondir"}

// CompletesGitDir reports whether writing rel inside root would make the
// root a git directory (HEAD with objects/ and refs/, or HEAD with
// commondir): git run later outside any sandbox would take the root for a
// repository and honour a config planted there.
func CompletesGitDir(root, rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	if !slices.Contains(GitDirParts, first) {
		return false // the common case costs no system call
	}
	return completesWith(first, func(p string) bool {
		_, err := os.Lstat(fsys.ToOS(slash.Join(root, p)))
		return err == nil
	})
}

// CompletesGitDirAt is CompletesGitDir for the root opened as fd, when
// the write's first component is first.
func CompletesGitDirAt(fd int, first string) bool {
	return completesWith(first, func(p string) bool {
		var st fsys.Stat_t
		return fsys.Fstatat(fd, p, &st, fsys.AT_SYMLINK_NOFOLLOW) == nil
	})
}

// completesWith reports whether adding first to the parts that has finds
// makes a git directory.
func completesWith(first string, has func(string) bool) bool {
	present := map[string]bool{first: true}
	for _, p := range GitDirParts {
		if p != first {
			present[p] = has(p)
		}
	}
	return present["HEAD"] && (present["objects"] && present["refs"] || present["commondir"])
}

// ReadGitdir returns the target of a ".git" pointer file ("gitdir: …").
func ReadGitdir(dotgit string) (string, bool) {
	line, ok := firstLine(dotgit)
	gitdir, found := strings.CutPrefix(line, "gitdir:")
	gitdir = strings.TrimSpace(gitdir)
	return gitdir, ok && found && gitdir != ""
}

// ReadCommondir returns what a worktree gitdir's commondir file names.
func ReadCommondir(gitdir string) (string, bool) {
	line, ok := firstLine(slash.Join(gitdir, "commondir"))
	return line, ok && line != ""
}

// firstLine returns the trimmed first line of a small regular file.
func firstLine(path string) (string, bool) {
	fi, err := os.Lstat(fsys.ToOS(path))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	file, err := os.Open(fsys.ToOS(path))
	if err != nil {
		return "", false
	}
	defer file.Close()
	line, _ := bufio.NewReader(file).ReadString('\n')
	return strings.TrimSpace(line), true
}

// gitProtectedNames are the protected parts of a git directory named by
// their first component (docs/design.md §4 step 5): what makes git run
// code or read its repository from elsewhere. The rest of a git directory
// is the repository's data, which git writes. gitProtectedParts adds the
// deeper ones (info/attributes, objects/info/alternates and
// http-alternates) and the same parts in every nested git directory
// (worktrees/<name>/, modules/<name>/); the .git entry itself is
// protected too.
var gitProtectedNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"config": true, "config.worktree": true, "hooks": true, "commondir": true, "gitdir": true,
	}
})

// GitProtectedPart reports whether rel, a path relative to a git
// directory ("config", "hooks/pre-commit", "worktrees/w/commondir"), is
// one of its protected parts or lies beneath one.
func GitProtectedPart(rel string) bool {
	if rel == "" || rel == "." {
		return false
	}
	return GitProtectedParts(strings.Split(rel, "/"))
}

func GitProtectedParts(p []string) bool {
	switch {
	case len(p) == 0:
		return false
	case gitProtectedNames()[p[0]]:
		return true
	case p[0] == "info":
		return len(p) >= 2 && p[1] == "attributes"
	case p[0] == "objects":
		return len(p) >= 3 && p[1] == "info" && (p[2] == "alternates" || p[2] == "http-alternates")
	case p[0] == "worktrees":
		return len(p) >= 3 && GitProtectedParts(p[2:])
	case p[0] == "modules":
		// A submodule's name may hold slashes: its git directory may
		// start at any depth beneath modules, but not beneath one of a
		// git directory's own parts (a branch named config in
		// modules/m/refs/heads is a ref).
		for k := 2; k < len(p); k++ {
			if gitDirOwnParts()[p[k-1]] {
				return false
			}
			if GitProtectedParts(p[k:]) {
				return true
			}
		}
	}
	return false
}

// GitProtectedByName reports whether rel, inside a writable root, is a
// protected part by the names alone, and the folder named .git it is
// in, relative to the root: an entry named .git, or a protected part of
// a folder named .git, whatever that folder holds yet (a .git being
// filled in by the file tool is a git directory by the time git reads
// it).
func GitProtectedByName(rel string) (string, bool) {
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		if name != ".git" {
			continue
		}
		if i == len(parts)-1 || GitProtectedParts(parts[i+1:]) {
			return slash.Join(parts[:i+1]...), true
		}
	}
	return "", false
}

// GitProtectedIn reports whether target, at rel inside a writable root,
// is a protected part of a git directory or lies beneath one, and that
// git directory: by name (GitProtectedByName); in any folder between the
// root and target that holds a git directory whatever its name
// (".repo/projects/p.git", a bare repository, a worktree's git folder);
// in one of pointed, the git folders a root's .git pointer leads to
// whatever they hold; or target being a git directory itself (moving one
// aside is replacing it). rel is given, not derived, for a target found
// in its root by identity rather than by name.
func GitProtectedIn(rel, target string, pointed []string) (string, bool) {
	for _, g := range pointed {
		if part, ok := Within(g, target); ok && (part == "." || GitProtectedPart(part)) {
			return g, true
		}
	}
	if rel == "." {
		return "", false
	}
	if dotgit, hit := GitProtectedByName(rel); hit {
		return slash.Join(strings.TrimSuffix(target, rel), dotgit), true
	}
	if IsGitDir(target) {
		return target, true
	}
	// The folders from target's up to the root, the root included.
	dir := target
	for range strings.Count(rel, "/") + 1 {
		dir = slash.Dir(dir)
		if IsGitDir(dir) {
			if part, _ := Within(dir, target); GitProtectedPart(part) {
				return dir, true
			}
		}
	}
	return "", false
}

// GitPartProtectedAt reports whether rest, the path from the folder
// opened as fd to a write's target, is a protected part of a git
// directory that folder holds: openConfined asks it of every folder on
// the way once opened, so a git directory exchanged into the path after
// the check is caught whatever its name by now.
func GitPartProtectedAt(fd int, rest string) bool {
	return GitProtectedPart(rest) && IsGitDirAt(fd)
}

// gitPartsBudget bounds the entries ProtectedGitParts looks at beneath one git
// directory's modules/ and worktrees/.
const gitPartsBudget = 4096

// gitPartNames are the protected parts of a git directory, as paths
// relative to it, that the mount layer binds read-only where they exist.
var gitPartNames = []string{"config", "config.worktree", "hooks", "commondir", "gitdir",
	"info/attributes", "objects/info/alternates", "objects/info/http-alternates"}

// GitProtectedNames lists the protected parts of every git directory as
// dsh-fs policy shows them (GitProtectedPart decides): a folder with a
// trailing slash.
func GitProtectedNames() []string {
	out := slices.Clone(gitPartNames)
	for i, n := range out {
		if n == "hooks" {
			out[i] = "hooks/"
		}
	}
	return out
}

// ProtectedGitParts returns the protected parts (GitProtectedPart) that exist
// in the git directory dir and in the git directories nested in it
// (worktrees/<name>/, modules/<name…>/, recognised by what they hold),
// and those git directories, dir first. It never follows a symlink: a
// part that is one is left to the fence and the guard, as mount(2)
// would follow it. list reads a folder's entries (ok false when it
// could not read them all); BoundedList stops past gitPartsBudget.
func ProtectedGitParts(dir string, list func(d string) ([]fs.DirEntry, bool)) (parts, gitDirs []string, ok bool) {
	var visit func(g string)
	visit = func(g string) {
		gitDirs = append(gitDirs, g)
		for _, name := range gitPartNames {
			var st fsys.Stat_t
			if fsys.Lstat(slash.Join(g, name), &st) == nil {
				if t := st.Mode & fsys.S_IFMT; t == fsys.S_IFDIR || t == fsys.S_IFREG {
					parts = append(parts, slash.Join(g, name))
				}
			}
		}
		for _, inner := range []string{"worktrees", "modules"} {
			var search func(d string, depth int)
			search = func(d string, depth int) {
				entries, all := list(d)
				if !all {
					ok = false
				}
				slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
				for _, e := range entries {
					if !e.IsDir() || e.Type()&os.ModeSymlink != 0 {
						continue
					}
					sub := slash.Join(d, e.Name())
					switch {
					case IsGitDir(sub):
						visit(sub)
					case inner == "modules" && depth < 8:
						// A submodule's name may hold slashes.
						search(sub, depth+1)
					}
				}
			}
			var st fsys.Stat_t
			if top := slash.Join(g, inner); fsys.Lstat(top, &st) == nil && st.Mode&fsys.S_IFMT == fsys.S_IFDIR {
				search(top, 0)
			}
		}
	}
	ok = true
	visit(dir)
	return parts, gitDirs, ok
}

// BoundedList returns a lister for ProtectedGitParts that reads at most
// gitPartsBudget entries in all: for a git directory no tree index holds.
func BoundedList() func(d string) ([]fs.DirEntry, bool) {
	seen := 0
	return func(d string) ([]fs.DirEntry, bool) {
		entries, all := ReadDirBounded(d, gitPartsBudget-seen)
		seen += len(entries)
		return entries, all
	}
}

// InsideGitDir reports the git directory that target, at rel inside its
// writable root, lies strictly inside: a folder named .git on the way,
// one of pointed, or a folder between the root and target that holds a
// git directory. A folder moved into or out of one may carry protected
// parts (a worktrees/<name>/ or modules/<name>/ with its config and
// hooks) that no glob names, so such a folder move is refused
// (checkBeneath); git itself moves nothing there but within them.
func InsideGitDir(rel, target string, pointed []string) (string, bool) {
	if rel == "." || rel == "" {
		return "", false
	}
	parts := strings.Split(rel, "/")
	for i := range len(parts) - 1 {
		if parts[i] == ".git" {
			return slash.Join(strings.TrimSuffix(target, rel), slash.Join(parts[:i+1]...)), true
		}
	}
	for _, g := range pointed {
		if part, ok := Within(g, target); ok && part != "." {
			return g, true
		}
	}
	dir := target
	for range len(parts) {
		dir = slash.Dir(dir)
		if IsGitDir(dir) {
			return dir, true
		}
	}
	return "", false
}

// gitDirOwnParts are the folders of a git directory that hold its own
// data, which git never takes for another repository and which may be
// large (objects, an annex).
var gitDirOwnParts = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"objects": true, "refs": true, "logs": true, "hooks": true, "info": true, "branches": true,
		"lfs": true, "annex": true, "rr-cache": true, "svn": true, "reftable": true,
	}
})
