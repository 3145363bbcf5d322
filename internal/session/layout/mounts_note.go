package layout

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/treeindex"
	"github.com/dshfs/dsh-fs/internal/version"
)

// A folder's note in its root's tree index is what the plan's visit found
// among its entries: which are hidden, bound read-only, git directories,
// sockets, deny_read files or folders not to go into. It depends on the
// folder's path and listing, which the index keeps while the folder's
// ctime is unchanged, and on the rules of the visit, which noteKey names:
// a warm plan applies each unchanged folder's note instead of matching
// its entries against every glob again, so it costs a few operations per
// folder and per match, not per entry.
//
// What a note cannot hold is done again at every plan: a deny_read
// file's number of links (noteDenied looks at it), a git directory's
// parts (addGitDir reads them), and the files that are hard links to a
// deny_read file (hideLinks compares the inode numbers of the listings
// with the deny identities, when there are any), since another folder's
// change (a new link to the file) moves no ctime of this one.

// noteFormat is the version of the notes' layout and of the rules of
// matchEntry: a change to either bumps it, so no note made under older
// rules is read.
const noteFormat = "dsh-fs mount note 2"

// The folder kinds a note opens with.
const (
	notePlain  byte = 'p' // an ordinary folder: its entries' records follow
	noteGitDir byte = 'g' // a git directory: its sockets' records follow
)

// What the visit found of an entry: the flags of its record.
const (
	markHideDir  = 1 << iota // a folder a deny_read glob covers, hidden
	markHideFile             // a file a deny_read glob covers, hidden
	markDenied               // a regular file a deny_read glob covers: its glob's index follows
	markReadOnly             // bound read-only
	markGitDir               // a folder named .git: addGitDir
	markCovered              // a folder not gone into
)

// notesMade counts the folders whose entries the plan matched (noteFolder):
// a warm plan under unchanged rules makes none for unchanged folders. A
// counter only so tests can tell a note applied from one made again.
var notesMade atomic.Int64

// buildID names this build: its version and commit, and the identity of
// its executable (device, inode, size, mtime), so that a rebuild from a
// checkout, whose version says "(devel)", makes its own notes too.
var buildID = sync.OnceValue(func() string {
	id := version.Build().String()
	if exe, err := os.Executable(); err == nil {
		id += exeIdentity(exe)
	}
	return id
})

// noteKey is the key of the notes of root under pl's rules: everything
// matchEntry's answer depends on but the entry's path and type.
func (pl *planner) noteKey(root string) string {
	h := sha256.New()
	add := func(s string) {
		h.Write(binary.AppendUvarint(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	add(noteFormat)
	add(buildID())
	add(root)
	for _, list := range [][]string{pl.protectedGlobs, pl.denyMatch, pl.denyShown, pl.config} {
		add("list")
		for _, s := range list {
			add(s)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// matchEntry is what the visit of root finds of the entry at abs, a
// folder (typ fs.ModeDir) or a regular file (typ 0): a record's flags,
// and the index of the deny_read glob that covers it (-1 for none). It
// depends only on abs, typ and pl's rules (noteKey), never on the disk.
func (pl *planner) matchEntry(root, abs string, typ fs.FileMode) (marks byte, denied int) {
	// A deny_read match hides it (unless it holds a config file); a
	// protected glob binds it read-only too, in case hiding is refused or
	// fails (plan keeps the hiding when both apply). The git rule by name, as
	// the fence has it: a folder named .git is pinned with its protected
	// parts bound, whatever it holds, and gone into; a .git file (a pointer)
	// and a protected part beneath a .git are bound read-only.
	covered := false
	denied = pl.deny.First(abs)
	if denied >= 0 && pl.mayHide(abs) {
		covered = true
		if typ.IsDir() {
			marks |= markHideDir
		} else {
			marks |= markHideFile
		}
	}
	if typ.IsRegular() && len(pl.denyShown) > 0 && denied >= 0 {
		marks |= markDenied
	}
	rel, _ := pathmatch.Within(root, abs)
	if pl.protectedPath(rel, abs) {
		marks |= markReadOnly
		covered = true
	}
	if _, hit := pathmatch.GitProtectedByName(rel); hit && !covered && rel != "." {
		if typ.IsDir() && baseName(abs) == ".git" {
			marks |= markGitDir
		} else {
			marks |= markReadOnly
			covered = true
		}
	}
	if covered && typ.IsDir() {
		marks |= markCovered
	}
	return marks, denied
}

// apply records what matchEntry (or a note) found of the entry at abs.
func (pl *planner) apply(abs string, marks byte, denied int) {
	if marks&markHideDir != 0 {
		pl.hidden[abs] = true
	}
	if marks&markHideFile != 0 {
		pl.hiddenFiles[abs] = true
	}
	if marks&markDenied != 0 {
		pl.noteDenied(abs, denied)
	}
	if marks&markReadOnly != 0 {
		pl.ro[abs] = true
	}
	if marks&markGitDir != 0 {
		pl.addGitDir(abs)
	}
}

// noteFolder matches the entries of the folder dir of root, which f
// lists, and returns its note: the records of the entries with anything
// to apply, in the order the visit applies them (reverse name order, as
// a depth-first walk in name order pushes them).
func (pl *planner) noteFolder(root, dir string, f *treeindex.Folder) string {
	notesMade.Add(1)
	entries := f.Entries()
	if gitDirIndexed(entries) {
		// Not gone into; its sockets, as every other, are the kernel's
		// list's (sockets.go).
		return string([]byte{noteGitDir})
	}
	b := []byte{notePlain}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		var marks byte
		denied := -1
		switch e.Kind {
		case treeindex.KindDir:
			marks, denied = pl.matchEntry(root, joinName(dir, e.Name), fs.ModeDir)
		case treeindex.KindFile:
			marks, denied = pl.matchEntry(root, joinName(dir, e.Name), 0)
		}
		if marks != 0 {
			b = appendRecord(b, e.Name, marks, denied)
		}
	}
	return string(b)
}

func appendRecord(b []byte, name string, marks byte, denied int) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, marks)
	if marks&markDenied != 0 {
		b = binary.AppendUvarint(b, uint64(denied))
	}
	return b
}

// noteRecord is one entry's record in a note.
type noteRecord struct {
	name   string
	marks  byte
	denied int
}

// parseNote reads a note; ok is false for one that does not parse or
// names a glob pl does not have (a note is then made again, never
// trusted in part).
func (pl *planner) parseNote(note string) (kind byte, recs []noteRecord, ok bool) {
	if note == "" || note[0] != notePlain && note[0] != noteGitDir {
		return 0, nil, false
	}
	kind, s := note[0], note[1:]
	for len(s) > 0 {
		n, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		if k <= 0 || n == 0 || n >= uint64(len(s)-k) {
			return 0, nil, false
		}
		r := noteRecord{name: s[k : k+int(n)], marks: s[k+int(n)], denied: -1}
		s = s[k+int(n)+1:]
		if r.marks&markDenied != 0 {
			d, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
			if k <= 0 || d >= uint64(len(pl.denyShown)) {
				return 0, nil, false
			}
			r.denied, s = int(d), s[k:]
		}
		if !validEntryName(r.name) || kind == noteGitDir {
			return 0, nil, false
		}
		recs = append(recs, r)
	}
	return kind, recs, true
}

func validEntryName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 {
			return false
		}
	}
	return true
}

func baseName(abs string) string {
	for i := len(abs) - 1; i >= 0; i-- {
		if abs[i] == '/' {
			return abs[i+1:]
		}
	}
	return abs
}
