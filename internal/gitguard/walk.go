//go:build unix

package gitguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/dirent"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// The end walk: what a later git run in the roots would reach, with no
// budget (docs/design.md §10). It lists each folder once (by device and
// inode, so a symlink loop ends), takes entry types from the listing
// (d_type), and stats only folders and the candidates: a ".git" entry, a
// symlink, and what it reads of a git directory. It never reads a folder
// as empty: one it cannot list is read with the rights its owner can be
// given back, or moved aside and named.

// gitDirOwnParts are the folders of a git directory that hold its own
// data, which git never takes for another repository and which may be
// large (objects, an annex): the walk does not go into them. The hooks
// are read on their own.
var gitDirOwnParts = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"objects": true, "refs": true, "logs": true, "hooks": true, "info": true, "branches": true,
		"lfs": true, "annex": true, "rr-cache": true, "svn": true, "reftable": true,
	}
})

// walk is one Check's walk.
type walk struct {
	g       *Guard
	rep     *Report
	visited map[[2]uint64]bool
	// gitDirs maps each git directory found, by canonical path, to
	// whether a folder on its path that is not fixed changed status
	// during the session: it may have been moved into place.
	gitDirs map[string]bool
	// pointers are the ".git" files and symlinks found.
	pointers []string
	// tops are the folders from which git's discovery goes up past what
	// the walk lists: the roots walked and the symlinks' targets.
	tops []string
	// buf is the listing buffer: a folder is listed whole before the
	// walk goes into its children.
	buf []byte
	// restore puts back the modes of the person's own folders the guard
	// opened to read them.
	restore []func()
	// indexes are the roots' tree indexes as the end scan found them
	// (walk_index.go).
	indexes []*treeindex.Index
}

func newWalk(g *Guard, rep *Report) *walk {
	return &walk{g: g, rep: rep, visited: map[[2]uint64]bool{}, gitDirs: map[string]bool{}}
}

// run walks the roots (not those of origin "tmp": /tmp is shared and
// large, and a git run in the workspace reaches it only through a
// symlink, which is followed), follows every pointer and commondir to
// the git directories they name, and looks up from each top as git's
// discovery does.
func (w *walk) run() {
	for _, r := range w.g.roots {
		if r.Origin == "tmp" {
			continue
		}
		w.tops = append(w.tops, r.Path)
		w.walkPath(r.Path)
	}
	w.follow()
	for i := 0; i < len(w.tops); i++ {
		w.discover(w.tops[i])
		w.follow()
	}
}

// finish puts back what run changed to read the person's own folders.
func (w *walk) finish() {
	for _, f := range w.restore {
		f()
	}
}

// fixed says whether the folder path (stat as st) cannot have been
// moved during the session, whatever its ctime.
func (w *walk) fixed(path string, id [2]uint64) bool {
	if w.g.fixed[path] {
		return true
	}
	gid, ok := w.g.rootGit[path]
	return ok && gid == id
}

// changedSince says whether the folder path changed status during the
// session and is not fixed.
func (w *walk) changedSince(path string, st *unix.Stat_t) bool {
	return w.changedAt(path, [2]uint64{uint64(st.Dev), st.Ino}, ctimeOf(st))
}

// changedAt is changedSince for the folder path of device and inode id
// and of ctime ctime.
func (w *walk) changedAt(path string, id [2]uint64, ctime time.Time) bool {
	return w.g.after(ctime) && !w.fixed(path, id)
}

// movedTo says whether a folder from the outermost writable root holding
// path down to path itself changed status during the session and is not
// fixed. Outside every writable root nothing was the session's to move.
func (w *walk) movedTo(path string) bool {
	top := ""
	for _, r := range w.g.writable {
		if sandbox.Beneath(r, path) && (top == "" || len(r) < len(top)) {
			top = r
		}
	}
	if top == "" {
		return false
	}
	for d := path; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Lstat(d, &st) == nil && w.changedSince(d, &st) {
			return true
		}
		if d == top || d == "/" {
			return false
		}
	}
}

// walkPath walks the canonical folder path and all beneath it.
func (w *walk) walkPath(path string) {
	if path == "/" {
		return // a root of "/" is refused; a symlink to it leads outside
	}
	w.walkFrom(path, w.movedTo(filepath.Dir(path)))
}

// walkAt walks the folder name of pfd, at path; moved says a folder
// above it changed status during the session.
func (w *walk) walkAt(pfd int, name, path string, moved bool) {
	if w.g.sealed[path] {
		return
	}
	fd, ok := w.open(pfd, name, path)
	if !ok {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		w.notChecked(path)
		return
	}
	id := [2]uint64{uint64(st.Dev), st.Ino}
	if w.visited[id] {
		return
	}
	w.visited[id] = true
	moved = moved || w.changedSince(path, &st)
	var children []child
	has := map[string]bool{}
	err := w.list(fd, func(name []byte, typ uint8) {
		if typ == unix.DT_UNKNOWN {
			var cst unix.Stat_t
			if unix.Fstatat(fd, string(name), &cst, unix.AT_SYMLINK_NOFOLLOW) != nil {
				return
			}
			typ = dtypeOf(uint32(cst.Mode))
		}
		if isGitPart(name) {
			has[string(name)] = true
		}
		if typ == unix.DT_DIR || typ == unix.DT_LNK || string(name) == ".git" {
			children = append(children, child{string(name), typ})
		}
	})
	if err != nil {
		// Never read as empty: what it holds is unknown.
		w.notChecked(path)
		return
	}
	isGit := has["HEAD"] && (has["objects"] && has["refs"] || has["commondir"])
	if isGit {
		w.gitDirs[path] = w.gitDirs[path] || moved
	}
	for _, c := range children {
		at := path + "/" + c.name
		switch {
		case c.typ == unix.DT_DIR:
			if !isGit || !gitDirOwnParts()[c.name] {
				w.walkAt(fd, c.name, at, moved)
			}
		case c.name == ".git" && (c.typ == unix.DT_REG || c.typ == unix.DT_LNK):
			w.pointers = append(w.pointers, at)
		case c.typ == unix.DT_LNK:
			w.symlink(fd, c.name, at)
		}
	}
}

// child is an entry of a folder the walk looks at further.
type child struct {
	name string
	typ  uint8
}

// isGitPart says whether name is one of the entries that make a folder
// a git directory; the common case allocates nothing.
func isGitPart(name []byte) bool {
	switch string(name) {
	case "HEAD", "objects", "refs", "commondir":
		return true
	}
	return false
}

// dtypeOf is the d_type of a file of mode m.
func dtypeOf(m uint32) uint8 {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return 0xff // another type: looked at no further
}

// list calls visit with the name and d_type of each entry of the folder
// fd but "." and "..", reading it with getdents64 into the walk's one
// buffer: an entry costs no allocation and no stat.
func (w *walk) list(fd int, visit func(name []byte, typ uint8)) error {
	if w.buf == nil {
		w.buf = make([]byte, 64<<10)
	}
	for {
		n, err := dirent.Read(fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// A record (getdents): d_ino (8) first, d_reclen (2) at 16,
		// d_type and d_name (NUL-terminated) where the OS puts them.
		for off := 0; off+dirent.NameOff <= n; {
			reclen := int(binary.NativeEndian.Uint16(w.buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return errors.New("bad folder entry")
			}
			typ := w.buf[off+dirent.TypeOff]
			name := w.buf[off+dirent.NameOff : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			visit(name, typ)
		}
	}
}

// open opens the folder name of pfd for listing. A folder it may not
// read is given to unreadable; one gone or replaced since it was listed
// is skipped.
func (w *walk) open(pfd int, name, path string) (int, bool) {
	fd, err := openFolder(pfd, name)
	switch {
	case err == nil:
		return fd, true
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return -1, false
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return w.unreadable(pfd, name, path)
	}
	w.notChecked(path)
	return -1, false
}

// unreadable reads the folder name of pfd that this process may not
// read. A folder of this process's user gets its owner's read and search
// rights (u+rx): where its mode changed during the session (the session
// took them), they stay restored and the report says so; where it did
// not (the person's own mode), they are put back once Check is done. A
// folder this user cannot enter either hides nothing the session (the
// same user) could reach. Any other folder is named as not checked and
// moved aside.
func (w *walk) unreadable(pfd int, name, path string) (int, bool) {
	var st unix.Stat_t
	if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return -1, false
	}
	if int(st.Uid) == os.Geteuid() {
		mode := uint32(st.Mode & 0o7777)
		if fd, err := grantRead(pfd, name, mode); err == nil {
			if dup, derr := unix.Dup(fd); derr == nil && !w.g.after(ctimeOf(&st)) {
				w.restore = append(w.restore, func() { putMode(dup, mode) })
			} else {
				if derr == nil {
					unix.Close(dup)
				}
				w.rep.Restored = append(w.rep.Restored, path)
			}
			return fd, true
		}
	}
	if unix.Faccessat(pfd, name, unix.X_OK, 0) != nil {
		return -1, false
	}
	w.notChecked(path)
	w.moveAside(pfd, name, path)
	return -1, false
}

// openFolder opens the folder name of pfd for listing, never following
// a symlink.
func openFolder(pfd int, name string) (int, error) {
	return unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
}

// notChecked names path as a folder the guard could not read.
func (w *walk) notChecked(path string) {
	if !slices.Contains(w.rep.NotChecked, path) {
		w.rep.NotChecked = append(w.rep.NotChecked, path)
	}
}

// symlink follows the symlink name of pfd, at path, when it leads to a
// folder: git run through it lists that folder. A target beneath a
// writable root is walked; outside them the session could change
// nothing, but the writable roots that lie beneath the target. Git's
// discovery from the target goes up from it (discover).
func (w *walk) symlink(pfd int, name, path string) {
	var st unix.Stat_t
	if unix.Fstatat(pfd, name, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	w.tops = append(w.tops, target)
	w.walkTarget(target)
}

// walkTarget walks the canonical folder target of a symlink, a pointer
// or git's discovery.
func (w *walk) walkTarget(target string) {
	if beneathAny(w.g.writable, target) {
		w.walkPath(target)
		return
	}
	if isGitDir(target) {
		// Judged, never acted on, nor walked: the session could change
		// nothing here, but what its config includes may lie in a root.
		w.gitDirs[target] = w.gitDirs[target] || false
	}
	for _, r := range w.g.writable {
		if r != target && sandbox.Beneath(target, r) {
			w.walkPath(r)
		}
	}
}

// discover looks up from top's parent to "/" as git's discovery does
// from top: the first folder holding a .git, or that is a git directory
// itself, ends it.
func (w *walk) discover(top string) {
	for d := filepath.Dir(top); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		var st unix.Stat_t
		if unix.Lstat(dotgit, &st) == nil {
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				w.walkTarget(dotgit)
			} else {
				w.pointers = append(w.pointers, dotgit)
			}
			return
		}
		if isGitDir(d) {
			w.walkTarget(d)
			return
		}
		if d == "/" {
			return
		}
	}
}

// follow walks the git directories the pointers found so far and the
// commondir of each git directory name, until nothing new is found.
func (w *walk) follow() {
	done := map[string]bool{}
	for {
		var next []string
		for _, p := range w.pointers {
			if !done[p] {
				next = append(next, p)
			}
		}
		for g := range w.gitDirs {
			if !done[g] {
				next = append(next, g)
			}
		}
		if len(next) == 0 {
			return
		}
		sort.Strings(next)
		for _, p := range next {
			done[p] = true
			var target string
			var ok bool
			if filepath.Base(p) == ".git" && !w.isFound(p) {
				target, ok = pointerTarget(p)
			} else {
				target, ok = commondirOf(p)
			}
			if ok {
				w.walkTarget(target)
			}
		}
	}
}

func (w *walk) isFound(p string) bool {
	_, ok := w.gitDirs[p]
	return ok
}

// pointerTarget is the canonical git directory a ".git" file ("gitdir:
// …", relative to its folder) or symlink leads to, when it leads to one.
func pointerTarget(dotgit string) (string, bool) {
	target := dotgit
	data, _, ok, err := readAt(unix.AT_FDCWD, dotgit, false)
	if err == nil && ok {
		line, _, _ := strings.Cut(string(data), "\n")
		gitdir, found := strings.CutPrefix(line, "gitdir:")
		if gitdir = strings.TrimSpace(gitdir); !found || gitdir == "" {
			return "", false
		}
		target = gitdir
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(dotgit), target)
		}
	}
	c, err := filepath.EvalSymlinks(target)
	if err != nil || !isGitDir(c) {
		return "", false
	}
	return c, true
}

// commondirOf is the canonical common git directory the worktree git
// directory g names in its commondir.
func commondirOf(g string) (string, bool) {
	data, _, ok, err := readAt(unix.AT_FDCWD, g+"/commondir", false)
	if err != nil || !ok {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", false
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(g, line)
	}
	c, err := filepath.EvalSymlinks(line)
	if err != nil || !isGitDir(c) {
		return "", false
	}
	return c, true
}

// isGitDir says whether dir is a git directory by what it holds: HEAD
// with objects and refs, or HEAD with commondir.
func isGitDir(dir string) bool {
	has := func(name string) bool {
		var st unix.Stat_t
		return unix.Lstat(dir+"/"+name, &st) == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
