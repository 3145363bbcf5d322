package sandbox

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// GitDirs finds the git directories that git, run later in the writable
// roots, would take its config and hooks from (docs/design.md §10, the git
// guard). It walks each root with the mount planner's walk, bounded by the
// same budget and never following a symlink: a folder holding HEAD with
// objects and refs (or commondir) is a git directory whatever its name,
// and is not walked into. A ".git" that is a file ("gitdir: …") or a
// symlink leads to a git directory wherever it lies, and a worktree's
// git directory to its commondir; the submodules' git directories
// (modules/…) and the linked worktrees' (worktrees/…) inside each are
// found too. Roots of origin "tmp" are not walked, as the planner does
// not walk them, but a pointer may lead into them.
//
// dirs are canonical, sorted, once each; partial names each folder whose
// walk stopped at the budget, whose git directories beyond were not
// looked at.
func GitDirs(roots []Root) (dirs, partial []string) {
	found := map[string]bool{}
	pl := planner{ro: found}
	var pointers []string
	visit := func(abs string, typ fs.FileMode) bool {
		// The walk lists no symlink, and .git may be one: asked of
		// every folder, it is one fstatat more per folder.
		var st unix.Stat_t
		if unix.Fstatat(unix.AT_FDCWD, filepath.Join(abs, ".git"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if t := st.Mode & unix.S_IFMT; t == unix.S_IFLNK || t == unix.S_IFREG {
				pointers = append(pointers, filepath.Join(abs, ".git"))
			}
		}
		return true
	}
	for _, r := range roots {
		if r.Origin == "tmp" {
			continue
		}
		if !pl.walk(r.Path, visit, true) {
			partial = append(partial, r.Path)
		}
	}
	for _, p := range pointers {
		if g, ok := gitPointerTarget(p); ok {
			found[g] = true
		}
	}
	// Worktrees name their common directory, and a repository holds its
	// submodules' and worktrees' git directories: each found may lead to
	// more, each looked at once.
	done := map[string]bool{}
	for {
		var next []string
		for g := range found {
			if !done[g] {
				next = append(next, g)
			}
		}
		if len(next) == 0 {
			break
		}
		slices.Sort(next)
		for _, g := range next {
			done[g] = true
			if common, ok := readCommondirAt(g); ok {
				if c, err := Canonical(g, common); err == nil {
					found[c] = true
				}
			}
			for _, inner := range []string{"modules", "worktrees"} {
				top := filepath.Join(g, inner)
				var st unix.Stat_t
				if unix.Fstatat(unix.AT_FDCWD, top, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
					continue
				}
				if !pl.walk(top, func(string, fs.FileMode) bool { return true }, true) {
					partial = append(partial, top)
				}
			}
		}
	}
	dirs = sortedKeys(found)
	if len(partial) > 0 {
		partial = slices.Compact(slices.Sorted(slices.Values(partial)))
	}
	return dirs, partial
}

// gitPointerTarget is the canonical git directory a ".git" file
// ("gitdir: …", relative to its folder) or symlink leads to, when it
// leads to one.
func gitPointerTarget(dotgit string) (string, bool) {
	target := dotgit
	if line, ok := smallFirstLine(unix.AT_FDCWD, dotgit); ok {
		gitdir, found := strings.CutPrefix(line, "gitdir:")
		if gitdir = strings.TrimSpace(gitdir); !found || gitdir == "" {
			return "", false
		}
		target = gitdir
	}
	c, err := Canonical(filepath.Dir(dotgit), target)
	if err != nil || !isGitDir(c) {
		return "", false
	}
	return c, true
}

// readCommondirAt is readCommondir without blocking on a fifo swapped in
// for the file.
func readCommondirAt(gitdir string) (string, bool) {
	line, ok := smallFirstLine(unix.AT_FDCWD, filepath.Join(gitdir, "commondir"))
	return line, ok && line != ""
}

// smallFirstLine is the trimmed first line of the small regular file at
// path (relative to dirfd), opened without following a symlink and
// without blocking: a session may leave a fifo where a file was.
func smallFirstLine(dirfd int, path string) (string, bool) {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 4096 {
		return "", false
	}
	buf := make([]byte, st.Size)
	n, _ := unix.Read(fd, buf)
	line, _, _ := strings.Cut(string(buf[:max(n, 0)]), "\n")
	return strings.TrimSpace(line), true
}
