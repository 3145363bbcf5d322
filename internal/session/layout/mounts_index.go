package layout

import (
	"io/fs"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// walkIndex visits the root of ix and what lies beneath it, depth first
// in name order, from the folders' listings in ix: each folder and
// regular file (matchEntry), never a symlink (sockets are the kernel's
// list's, sockets.go). A folder whose listing makes it a git directory is recorded
// (addGitDir) and not gone into. A folder ix could not read is hidden,
// and listed in Unreadable: what it holds is unknown, and the session
// must not read what the plan could not judge. There is no budget: ix
// holds the whole tree.
func (pl *planner) walkIndex(ix *treeindex.Index) {
	// What the visit finds in a folder is kept as the folder's note in ix
	// (mounts_note.go): a folder unchanged since an earlier plan under the
	// same rules is not matched again, its note applied instead.
	root := ix.Root()
	ix.UseNotes(pl.noteKey(root))
	marks, denied := pl.matchEntry(root, root, fs.ModeDir)
	pl.apply(root, marks, denied)
	if marks&markCovered != 0 {
		return
	}
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dir := joinName(root, rel)
		f, ok := ix.Folder(rel)
		if !ok {
			continue // gone, or swapped for a non-folder, while read
		}
		kind, recs, ok := pl.parseNote(f.Note())
		if !ok && !f.Unreadable {
			note := pl.noteFolder(root, dir, f)
			if !f.Unreadable { // its entries decoded
				ix.SetNote(f, note)
				kind, recs, _ = pl.parseNote(note)
			}
		}
		if f.Unreadable {
			if pl.hide(dir, fs.ModeDir) {
				pl.unreadable[dir] = true
			} else {
				pl.partial = append(pl.partial, dir) // it holds a config file
			}
			continue
		}
		if kind == noteGitDir {
			// Not gone into: objects may be large. The socket git's
			// fsmonitor daemon listens at is in the kernel's list
			// (sockets.go).
			pl.addGitDir(dir)
			continue
		}
		pl.visited = append(pl.visited, visitedFolder{dir, f})
		var covered []string // in reverse name order, as the records
		for _, r := range recs {
			pl.apply(joinName(dir, r.name), r.marks, r.denied)
			if r.marks&markCovered != 0 {
				covered = append(covered, r.name)
			}
		}
		for i, j := len(f.Dirs)-1, 0; i >= 0; i-- {
			d := f.Dirs[i]
			for j < len(covered) && covered[j] > d {
				j++
			}
			if j < len(covered) && covered[j] == d {
				continue
			}
			stack = append(stack, joinName(rel, d))
		}
	}
}

// hideLinksIn hides the regular files of the visited folder v whose
// inode number is in inos and that are the same file as a deny_read file
// (hideLinks). A folder whose entries fail to decode is hidden whole.
func (pl *planner) hideLinksIn(v visitedFolder, inos map[uint64]bool) {
	entries := v.f.Entries()
	if v.f.Unreadable {
		if pl.hide(v.dir, fs.ModeDir) {
			pl.unreadable[v.dir] = true
		}
		return
	}
	for _, e := range entries {
		if e.Kind != treeindex.KindFile || !inos[e.Ino] {
			continue
		}
		abs := joinName(v.dir, e.Name)
		if pl.deny.First(abs) >= 0 {
			continue // a deny_read file itself, hidden by its glob
		}
		if id, ok := linkedID(abs); ok {
			if _, secret := pl.denyIDs[id]; secret {
				pl.hide(abs, 0)
			}
		}
	}
}

// joinName is filepath.Join of a clean folder (canonical, or a clean
// relative path, "." for none) and a name of its listing, which holds no
// slash and is neither "." nor "..", without Join's Clean.
func joinName(dir, name string) string {
	switch {
	case name == ".":
		return dir
	case dir == ".":
		return name
	case dir == "/":
		return "/" + name
	}
	return dir + "/" + name
}

// gitDirIndexed reports whether a folder whose listing in a tree index
// is entries is a git directory, by pathmatch.IsGitDir's rule.
func gitDirIndexed(entries []treeindex.Entry) bool {
	has := func(n string) bool {
		_, found := slices.BinarySearchFunc(entries, n, func(e treeindex.Entry, n string) int { return strings.Compare(e.Name, n) })
		return found
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// gitList is the lister pathmatch.ProtectedGitParts reads the git directory dir
// with: the tree index of a root holding dir, whole, with no budget a
// session could exhaust by filling worktrees/ or modules/; a read bounded
// by gitPartsBudget where no index holds it (a git directory a pointer
// leads to before its root is read). A folder the index could not read
// is not read whole: pathmatch.ProtectedGitParts then lists dir in Partial.
func (pl *planner) gitList(dir string) func(d string) ([]fs.DirEntry, bool) {
	for _, ix := range pl.indexes {
		if !sandbox.Beneath(ix.Root(), dir) {
			continue
		}
		return func(d string) ([]fs.DirEntry, bool) {
			rel, ok := pathmatch.Within(ix.Root(), d)
			if !ok {
				return nil, false
			}
			f, found := ix.Folder(rel)
			if !found {
				return nil, true // gone, or no folder, while read
			}
			list := f.Entries()
			if f.Unreadable {
				return nil, false
			}
			entries := make([]fs.DirEntry, len(list))
			for i, e := range list {
				entries[i] = indexDirEntry{e}
			}
			return entries, true
		}
	}
	return pathmatch.BoundedList()
}

// indexDirEntry is an entry of a tree index as an fs.DirEntry, without
// Info: the index holds no more than its name and type.
type indexDirEntry struct{ e treeindex.Entry }

func (d indexDirEntry) Name() string { return d.e.Name }
func (d indexDirEntry) IsDir() bool  { return d.e.Kind == treeindex.KindDir }
func (d indexDirEntry) Info() (fs.FileInfo, error) {
	return nil, &fs.PathError{Op: "info", Path: d.e.Name, Err: fs.ErrInvalid}
}

func (d indexDirEntry) Type() fs.FileMode {
	switch d.e.Kind {
	case treeindex.KindDir:
		return fs.ModeDir
	case treeindex.KindFile:
		return 0
	case treeindex.KindSymlink:
		return fs.ModeSymlink
	case treeindex.KindSocket:
		return fs.ModeSocket
	}
	return fs.ModeIrregular
}
