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
// same budget and never following a symlink. A folder holding HEAD with
// objects and refs (or commondir) is a git directory whatever its name,
// by isGitDir's rule. Unlike the planner, the walk goes on into a git
// directory, past its own parts (objects, refs, logs, hooks, …): a
// session could make any folder look like one, and a repository planted
// beneath it must not hide there; so the submodules' (modules/…) and
// linked worktrees' (worktrees/…) git directories are found too. A ".git"
// that is a file ("gitdir: …") or a symlink leads to a git directory
// wherever it lies, and a worktree's to its commondir; what those lead to
// outside the walked roots is listed, with its modules and worktrees, but
// not walked further. Roots of origin "tmp" are not walked, as the
// planner does not walk them, but a pointer may lead into them.
//
// dirs are canonical, sorted, once each; partial names each folder whose
// walk stopped at the budget, whose git directories beyond were not
// looked at.
func GitDirs(roots []Root) (dirs, partial []string) {
	found := map[string]bool{}
	pl := planner{}
	var pointers []string
	visit := func(abs string, typ fs.FileMode) bool {
		if !typ.IsDir() {
			return false
		}
		if found[filepath.Dir(abs)] && gitDirOwnParts[filepath.Base(abs)] {
			return false
		}
		// The walk lists no symlink, and .git may be one: asked of
		// every folder, with HEAD, two fstatat more per folder.
		var st unix.Stat_t
		if unix.Fstatat(unix.AT_FDCWD, filepath.Join(abs, ".git"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if t := st.Mode & unix.S_IFMT; t == unix.S_IFLNK || t == unix.S_IFREG {
				pointers = append(pointers, filepath.Join(abs, ".git"))
			}
		}
		if unix.Fstatat(unix.AT_FDCWD, filepath.Join(abs, "HEAD"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && isGitDir(abs) {
			found[abs] = true
		}
		return true
	}
	var walked []string
	for _, r := range roots {
		if r.Origin == "tmp" {
			continue
		}
		walked = append(walked, r.Path)
		if !pl.walk(r.Path, visit) {
			partial = append(partial, r.Path)
		}
	}
	for _, p := range pointers {
		if g, ok := gitPointerTarget(p); ok {
			found[g] = true
		}
	}
	// A worktree names its common directory, and a repository reached
	// only by a pointer holds its submodules' and worktrees' git
	// directories: each found may lead to more, each looked at once.
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
				if c, err := Canonical(g, common); err == nil && isGitDir(c) {
					found[c] = true
				}
			}
			if beneathAny(walked, g) {
				continue // the walk of its root went through it
			}
			for _, inner := range []string{"modules", "worktrees"} {
				top := filepath.Join(g, inner)
				var st unix.Stat_t
				if unix.Fstatat(unix.AT_FDCWD, top, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
					continue
				}
				inside := func(abs string, typ fs.FileMode) bool {
					if found[filepath.Dir(abs)] && gitDirOwnParts[filepath.Base(abs)] {
						return false
					}
					if isGitDir(abs) {
						found[abs] = true
					}
					return true
				}
				if !pl.walk(top, inside) {
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

// gitDirOwnParts are the folders of a git directory that hold its own
// data, which git never takes for another repository and which may be
// large (objects, an annex): the guard's walk does not go into them. The
// hooks are read on their own.
var gitDirOwnParts = map[string]bool{
	"objects": true, "refs": true, "logs": true, "hooks": true, "info": true, "branches": true,
	"lfs": true, "annex": true, "rr-cache": true, "svn": true, "reftable": true,
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
// path (relative to dirfd), never following a symlink and never opening
// anything else: a session may leave a fifo or a device where a file
// was. It is opened O_PATH, checked, and only then opened for reading
// through that descriptor.
func smallFirstLine(dirfd int, path string) (string, bool) {
	pfd, err := unix.Openat(dirfd, path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 4096 {
		return "", false
	}
	fd, err := unix.Open(procFd(pfd), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	buf := make([]byte, st.Size)
	n, _ := unix.Read(fd, buf)
	line, _, _ := strings.Cut(string(buf[:max(n, 0)]), "\n")
	return strings.TrimSpace(line), true
}
