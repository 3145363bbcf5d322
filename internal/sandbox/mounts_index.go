package sandbox

import (
	"io/fs"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// walkIndex visits the root of ix and what lies beneath it, depth first
// in name order, as walk does, from the folders' listings in ix: each
// folder (with visitRoot) and regular file, never a symlink, the sockets
// for the socket layer. A folder whose listing makes it a git directory
// is recorded (addGitDir) and not gone into. A folder ix could not read
// is hidden, and listed in Unreadable: what it holds is unknown, and the
// session must not read what the plan could not judge. There is no
// budget: ix holds the whole tree.
func (pl *planner) walkIndex(ix *treeindex.Index) {
	root := ix.Root()
	visit := pl.visitRoot(root)
	if !visit(root, fs.ModeDir, 0) {
		return
	}
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dir := joinName(root, rel)
		f, ok := ix.Folder(rel)
		switch {
		case !ok:
			continue // gone, or swapped for a non-folder, while read
		case f.Unreadable:
			if pl.hide(dir, fs.ModeDir) {
				pl.unreadable[dir] = true
			} else {
				pl.partial = append(pl.partial, dir) // it holds a config file
			}
			continue
		case gitDirIndexed(f.Entries):
			// Not gone into: objects may be large. The socket git's
			// fsmonitor daemon listens at is in the kernel's list
			// (sockets.go).
			pl.addGitDir(dir)
			continue
		}
		for i := len(f.Entries) - 1; i >= 0; i-- {
			e := f.Entries[i]
			abs := joinName(dir, e.Name)
			switch e.Kind {
			case treeindex.KindDir:
				if visit(abs, fs.ModeDir, 0) {
					stack = append(stack, joinName(rel, e.Name))
				}
			case treeindex.KindFile:
				visit(abs, 0, e.Ino)
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
// is entries is a git directory, by isGitDir's rule.
func gitDirIndexed(entries []treeindex.Entry) bool {
	has := func(n string) bool {
		_, found := slices.BinarySearchFunc(entries, n, func(e treeindex.Entry, n string) int { return strings.Compare(e.Name, n) })
		return found
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}

// gitList is the lister protectedGitParts reads the git directory dir
// with: the tree index of a root holding dir, whole, with no budget a
// session could exhaust by filling worktrees/ or modules/; a read bounded
// by gitPartsBudget where no index holds it (a git directory a pointer
// leads to before its root is read). A folder the index could not read
// is not read whole: protectedGitParts then lists dir in Partial.
func (pl *planner) gitList(dir string) func(d string) ([]fs.DirEntry, bool) {
	for _, ix := range pl.indexes {
		if !Beneath(ix.Root(), dir) {
			continue
		}
		return func(d string) ([]fs.DirEntry, bool) {
			rel, ok := within(ix.Root(), d)
			if !ok {
				return nil, false
			}
			f, found := ix.Folder(rel)
			switch {
			case !found:
				return nil, true // gone, or no folder, while read
			case f.Unreadable:
				return nil, false
			}
			entries := make([]fs.DirEntry, len(f.Entries))
			for i, e := range f.Entries {
				entries[i] = indexDirEntry{e}
			}
			return entries, true
		}
	}
	return boundedList()
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
