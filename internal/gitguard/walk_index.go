//go:build unix

package gitguard

import (
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// The end walk through the roots' tree indexes. The mount
// plan read each writable root's index before CMD started; when CMD has
// ended, Check scans each again against that (treeindex.Scan): every
// folder is lstat'ed, and only a folder whose device, inode or ctime
// changed since, a new one, or one racy or unreadable then, is read
// again. What the walk then takes from the index is what a listing
// would have given it: a folder whose ctime did not move holds the
// entries it held (a change of a folder's entries moves its ctime, and
// no session can set a ctime). Parents do not vouch for their children:
// a folder's ctime says nothing of its subfolders', so every folder is
// checked, none skipped with its parent. A folder the index could not
// read, or whose entries do not decode, is walked live (walkAt), with
// its owner's rights restored or moved aside as ever; so are the targets
// of symlinks outside the indexed roots.

// scanIndexes brings each root's index the plan read up to date, for
// the walk; the indexes so made are saved once Check is done.
func (w *walk) scanIndexes() {
	for _, r := range w.g.roots {
		prev := w.g.indexes[r.Path]
		if prev == nil || r.Origin == "tmp" {
			continue
		}
		ix := treeindex.Scan(r.Path, prev, IndexWatch()...)
		w.indexes = append(w.indexes, ix)
		w.g.scanned.Reused += ix.Stats.Reused
		w.g.scanned.Read += ix.Stats.Read
	}
}

// indexed returns the index holding the canonical folder path and its
// path relative to the index's root.
func (w *walk) indexed(path string) (*treeindex.Index, string, bool) {
	for _, ix := range w.indexes {
		root := ix.Root()
		switch {
		case path == root:
			return ix, ".", true
		case sandbox.Beneath(root, path):
			return ix, path[len(root)+1:], true
		}
	}
	return nil, "", false
}

// walkFrom walks the canonical folder path, moved saying a folder above
// it changed status during the session: through an index that holds it,
// or live.
func (w *walk) walkFrom(path string, moved bool) {
	if ix, rel, ok := w.indexed(path); ok {
		if f, ok := ix.Folder(rel); ok && w.walkFolder(ix, rel, f, path, moved) {
			return
		}
	}
	w.walkLive(path, moved)
}

// walkLive walks the canonical folder path by listing it and all
// beneath it (walkAt).
func (w *walk) walkLive(path string, moved bool) {
	parent := filepath.Dir(path)
	pfd, err := kernel.OpenNoSymlinks(parent, dirHandle)
	if err != nil {
		return // gone, or replaced by a symlink since it was resolved
	}
	defer unix.Close(pfd)
	w.walkAt(pfd, filepath.Base(path), path, moved)
}

// walkFolder is walkAt for the folder f of the index ix, at rel and
// path, as the end scan found it. It returns false, having done
// nothing, when the index cannot vouch for the folder's entries
// (unreadable, or entries that do not decode): the caller walks it live.
func (w *walk) walkFolder(ix *treeindex.Index, rel string, f *treeindex.Folder, path string, moved bool) bool {
	if f.Unreadable {
		return false
	}
	if w.g.sealed[path] {
		return true
	}
	id := [2]uint64{f.Dev, f.Ino}
	if w.visited[id] {
		return true
	}
	// Only the names that make a git directory, the symlinks and a .git
	// are looked at, and the index says which the folder holds
	// (IndexWatch): the entries of a folder with no symlink and no .git
	// are not decoded at all, and the others cost no allocation.
	held, symlinks := f.Holds()
	parts := gitParts(held) & gitPartsAll
	var specials []special
	if (symlinks || held&heldDotGit != 0) && !f.Each(func(name string, kind treeindex.Kind) {
		if kind == treeindex.KindSymlink || name == ".git" {
			specials = append(specials, special{name, kind})
		}
	}) {
		return false
	}
	w.visited[id] = true
	moved = moved || w.changedAt(path, id, time.Unix(f.CtimeSec, f.CtimeNsec))
	isGit := parts.gitDir()
	if isGit {
		w.gitDirs[path] = w.gitDirs[path] || moved
	}
	for _, name := range f.Dirs {
		if isGit && gitDirOwnParts()[name] {
			continue
		}
		sub, at := join(rel, name), path+"/"+name
		if sf, ok := ix.Folder(sub); !ok || !w.walkFolder(ix, sub, sf, at, moved) {
			// Not vouched for: gone since its folder was read (the live
			// walk skips it then), or unreadable.
			w.walkLive(at, moved)
		}
	}
	for _, e := range specials {
		at := path + "/" + e.name
		switch {
		case e.name == ".git" && (e.kind == treeindex.KindFile || e.kind == treeindex.KindSymlink):
			w.pointers = append(w.pointers, at)
		case e.kind == treeindex.KindSymlink:
			w.symlink(unix.AT_FDCWD, at, at)
		}
	}
	return true
}

// special is an entry of a folder the indexed walk looks at further: a
// symlink or a .git.
type special struct {
	name string
	kind treeindex.Kind
}

// IndexWatch are the names the end walk looks for in a folder, in the
// order of the bits of what a folder of a tree index watching them holds
// (treeindex.Folder.Holds): a git directory's parts, as gitParts has
// them, then .git. The mount plan makes the roots' indexes watching them
// too, so that the kept folders already say.
func IndexWatch() []string { return []string{"HEAD", "objects", "refs", "commondir", ".git"} }

// heldDotGit is the bit of a .git among the names a folder holds.
const heldDotGit = 1 << 4

// gitParts are the entries of a folder that make it a git directory:
// HEAD 1, objects 2, refs 4, commondir 8 (IndexWatch's order).
type gitParts uint8

// gitPartsAll are the bits of gitParts.
const gitPartsAll gitParts = 0b1111

// gitDir says whether the parts make a git directory: HEAD with objects
// and refs, or HEAD with commondir (isGitDir).
func (p gitParts) gitDir() bool { return p&1 != 0 && (p&6 == 6 || p&8 != 0) }

// join is rel's child name, relative to the index's root.
func join(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}
