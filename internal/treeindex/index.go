// Package treeindex keeps what each folder of one folder tree holds, and
// brings a kept copy up to date by asking each folder whether it changed
// (its ctime) instead of reading it again. It is mechanism only: it knows
// nothing of globs, git or what a caller protects; it only says, for each
// folder beneath a root, which entries it holds, of which type, with
// which inode number, or that it could not be read.
//
// A folder's ctime changes whenever an entry is added to it, removed from
// it or renamed in or out of it, and whenever its mode or owner changes;
// no unprivileged process can set it (utimensat sets atime and mtime
// only, and setting the clock needs CAP_SYS_TIME). So a folder whose
// device, inode and ctime are those kept holds the entries kept, and a
// check of a tree costs one lstat per folder, not one read per entry.
package treeindex

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshfs/dsh-fs/internal/dirent"
	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Kind is the type of a folder's entry, as dirent.Read(2) tells it.
type Kind uint8

// The kinds of entry. A device or a fifo is KindOther.
const (
	KindOther Kind = iota
	KindDir
	KindFile
	KindSymlink
	KindSocket
	kindCount
)

// Entry is one entry of a folder: its name, its type and its inode number
// (on the folder's device, but for a mount point).
type Entry struct {
	Name string
	Kind Kind
	Ino  uint64
}

// Folder is what one folder held when it was last read. Unreadable says
// it could not be read (or not even looked at) with the credentials of
// the process that scanned it: it never reads as empty.
type Folder struct {
	Dev, Ino   uint64
	CtimeSec   int64
	CtimeNsec  int64
	Unreadable bool
	// Racy says its ctime fell within racyWindow of the moment it was
	// read: a change made in the same tick of the kernel's coarse clock
	// would leave the ctime as it was, so it is read again next time
	// whatever its ctime (git's "racy index" problem).
	Racy bool
	// Dirs are the names of the entries that are folders, sorted: what
	// a scan goes into, known without decoding the entries.
	Dirs []string
	// held and symlinks are what Holds says, made when its entries are
	// read or its index's watch changes, never after: a folder shared
	// between two indexes is not written to.
	held     uint8
	symlinks bool

	// entries are sorted by name, "." and ".." left out; an index
	// loaded from a file keeps them encoded (raw) until asked for.
	entries []Entry
	raw     string
	count   int
	// note is the caller's, about this listing (SetNote).
	note string
}

// Entries are the folder's entries, sorted by name, "." and ".." left
// out. An index loaded from its file decodes them here, on first use, so
// a caller that needs only a folder's Dirs and Note pays nothing per
// entry. Entries that fail to decode (a file that passed its checksum but
// not its layout) make the folder Unreadable: it never reads as empty.
func (f *Folder) Entries() []Entry {
	if f.raw != "" {
		entries, err := decodeEntries(f.raw, f.count, f.Dirs)
		f.raw = ""
		if err != nil {
			f.setEntries(nil, nil)
			f.Unreadable = true
		}
		f.entries = entries
	}
	return f.entries
}

// Each calls fn with the name and kind of each of the folder's entries,
// sorted by name, and reports whether they all decoded. Unlike Entries
// it builds nothing and keeps nothing: a caller looking for a few names
// pays no allocation per entry, and it changes nothing of f, so it may
// run while the index is being saved. Where an index loaded from its
// file holds entries that do not decode, fn may have been called for
// some of them and Each returns false: the caller takes the folder for
// unreadable, never for empty (Entries marks it so).
func (f *Folder) Each(fn func(name string, kind Kind)) bool {
	if f.raw == "" {
		for _, e := range f.entries {
			fn(e.Name, e.Kind)
		}
		return !f.Unreadable
	}
	return eachEntry(f.raw, f.count, f.Dirs, func(e Entry) { fn(e.Name, e.Kind) }) == nil
}

// setEntries sets f's entries, sorted, and its Dirs and what it holds of
// watch (Holds) from them.
func (f *Folder) setEntries(entries []Entry, watch []string) {
	f.entries, f.raw, f.count, f.Dirs = entries, "", len(entries), nil
	f.held, f.symlinks = 0, false
	for _, e := range entries {
		if e.Kind == KindDir {
			f.Dirs = append(f.Dirs, e.Name)
		}
		f.note1(watch, e.Name, e.Kind)
	}
}

// Holds says which of its index's watched names the folder holds (bit i
// for the i-th name of Scan's watch) and whether any of its entries is a
// symlink: what a caller looking for those learns without decoding its
// entries. An unreadable folder holds nothing known.
func (f *Folder) Holds() (watched uint8, symlinks bool) { return f.held, f.symlinks }

// note1 adds the entry name of kind to what f holds of watch.
func (f *Folder) note1(watch []string, name string, kind Kind) {
	if kind == KindSymlink {
		f.symlinks = true
	}
	for i, w := range watch {
		if name == w {
			f.held |= 1 << i
		}
	}
}

// watching is f as an index watching watch holds it: f itself where its
// index watched the same names, else a copy that says what it holds of
// watch, its kept entries looked at once for it (a copy that cannot
// decode them is unreadable, as Entries would make it).
func (f *Folder) watching(watch []string, same bool) *Folder {
	if same || f.Unreadable {
		return f
	}
	c := *f
	c.held, c.symlinks = 0, false
	if !c.Each(func(name string, kind Kind) { c.note1(watch, name, kind) }) {
		c = Folder{Dev: f.Dev, Ino: f.Ino, CtimeSec: f.CtimeSec, CtimeNsec: f.CtimeNsec, Unreadable: true}
	}
	return &c
}

// maxWatched is how many names an index watches at most (Holds' bits).
const maxWatched = 8

// Note is what the caller noted about the folder's listing under the
// index's note key (SetNote, UseNotes): "" when nothing is, or when the
// folder was read again since (a changed, new or racy folder).
func (f *Folder) Note() string { return f.note }

// racyWindow is how close to the moment of reading a ctime may be before
// the folder is read again next time. The kernel stamps ctimes from a
// coarse clock (a tick of a few ms); a second is far beyond it.
const racyWindow = time.Second

// Index is the folder tree beneath one root: each folder by its path
// relative to the root ("." for the root itself).
type Index struct {
	root    string
	rootDev uint64
	rootIno uint64
	folders map[string]*Folder
	entries int
	noteKey string
	// watch are the names each folder says it holds or not (Holds).
	watch []string
	// changed says the index differs from the file it was loaded from:
	// a folder read or dropped, a note set or cleared.
	changed bool
	// same are the folders Scan found the same, for Settle.
	same []sameFolder
	// Stats says what the Scan that made it did.
	Stats Stats
}

// UseNotes reports whether the folders' notes were made under key; when
// not, it drops every folder's note and takes key for the notes to come.
// A caller keys its notes by everything its reading of a listing
// depends on, so that a note is never read under other rules.
func (ix *Index) UseNotes(key string) bool {
	if ix.noteKey == key {
		return true
	}
	for _, f := range ix.folders {
		f.note = ""
	}
	ix.noteKey, ix.changed = key, true
	return false
}

// SetNote keeps note with the folder f of ix while the folder is
// unchanged: Scan carries it over with the folder's listing, and drops it
// when it reads the folder again.
func (ix *Index) SetNote(f *Folder, note string) {
	if f.note != note {
		f.note, ix.changed = note, true
	}
}

// Changed reports whether ix differs from what its store holds: made
// without a kept index, a folder read or dropped by its Scan, or a note
// set or cleared since.
func (ix *Index) Changed() bool { return ix.changed }

// Stats counts what a Scan did: folders whose kept entries were taken
// as they were, and folders read (new, changed, racy or unreadable).
type Stats struct {
	Reused, Read int
	// Same counts the folders of Read whose entries were found as kept
	// (their ctime moved, their listing did not): they leave the index
	// unchanged.
	Same int
}

// Root is the root the index is of.
func (ix *Index) Root() string { return ix.root }

// Folder returns the folder at rel, relative to the root ("." for the
// root), as the scan found it; false when it is no folder of the tree.
func (ix *Index) Folder(rel string) (*Folder, bool) {
	f, ok := ix.folders[rel]
	return f, ok
}

// Len is the number of folders and of entries in the index.
func (ix *Index) Len() (folders, entries int) { return len(ix.folders), ix.entries }

// Scan returns the index of the tree beneath root (a canonical folder),
// taking from prev (an earlier index of the same root, or nil) every
// folder whose device, inode and ctime are unchanged and that was not
// racy or unreadable, and reading every other folder it meets. It never
// follows a symlink and has no budget. A folder it cannot read or stat
// is Unreadable, never empty. On a file system whose ctimes it does not
// know to be kept by the kernel (fsInfo) every folder is read. Each
// folder says which of the names of watch (the first maxWatched) it
// holds (Folder.Holds): one kept from a prev that watched other names is
// looked at once for them.
func Scan(root string, prev *Index, watch ...string) *Index {
	ix := &Index{root: root, folders: map[string]*Folder{}, watch: slices.Clone(watch[:min(len(watch), maxWatched)])}
	var st fsys.Stat_t
	if fsys.Lstat(root, &st) == nil {
		ix.rootDev, ix.rootIno = uint64(st.Dev), st.Ino
	}
	if prev != nil && (prev.root != root || prev.rootDev != ix.rootDev || prev.rootIno != ix.rootIno) {
		prev = nil
	}
	if prev != nil {
		ix.noteKey = prev.noteKey
	}
	sameWatch := prev != nil && slices.Equal(prev.watch, ix.watch)
	fss := map[uint64]fsInfo{}
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		abs := filepath.Join(root, rel)
		if err := fsys.Lstat(abs, &st); err != nil {
			if errors.Is(err, fsys.EACCES) {
				ix.folders[rel] = &Folder{Unreadable: true}
				ix.Stats.Read++
			}
			continue // gone since its folder was read
		}
		if st.Mode&fsys.S_IFMT != fsys.S_IFDIR {
			continue // swapped since its folder was read
		}
		info, ok := fss[uint64(st.Dev)]
		if !ok {
			info = statFS(abs)
			fss[uint64(st.Dev)] = info
		}
		var f *Folder
		if old, ok := prev.lookup(rel); ok && info.ctimeKept && old.unchanged(&st) {
			f = old.watching(ix.watch, sameWatch)
			ix.Stats.Reused++
		} else {
			f = readFolder(abs, &st, !info.dinoKept, ix.watch)
			ix.Stats.Read++
			if old, ok := prev.lookup(rel); ok && old.sameListing(f) {
				if !old.Racy {
					// Read again and found as kept (entries made and
					// removed again since, as a session's placeholders
					// are): the kept folder stays, its ctime and note
					// with it, so nothing is saved for it, and the next
					// scan reads it again, its ctime still not the kept
					// one; unless many are and the caller settles them
					// (Settle).
					ix.same = append(ix.same, sameFolder{rel, f})
					f = old.watching(ix.watch, sameWatch)
					ix.Stats.Same++
				} else {
					// Kept racy, found the same: the listing read now
					// replaces it, with its ctime and racy mark of now
					// (settled, it is reused from then on), and the
					// note about the same listing carries over.
					f.note = old.note
				}
			}
		}
		ix.folders[rel] = f
		ix.entries += f.count
		for _, d := range f.Dirs {
			stack = append(stack, join(rel, d))
		}
	}
	ix.changed = prev == nil || !sameWatch || ix.Stats.Read > ix.Stats.Same || len(prev.folders) != ix.Stats.Reused+ix.Stats.Same
	return ix
}

// sameSettled is how many folders a scan may find the same (their ctime
// moved, their listing not) and Settle leave as kept. A session's
// placeholders move the ctimes of a few folders (a root, its .git) at
// every session: reading those again costs less than saving the whole
// index each time. Many at once (a chown -R or chmod -R of the tree, a
// restore) would be read again at every scan from then on, the whole
// tree in the worst case: those are settled.
const sameSettled = 8

// sameFolder is a folder Scan found the same: its path, and the folder
// as read now.
type sameFolder struct {
	rel   string
	fresh *Folder
}

// Settle, where ix's Scan found more than sameSettled folders the same,
// gives each its ctime of now (and racy mark), with its listing and note,
// and marks ix changed: saved, the next scan reuses them. Without it a
// folder found the same keeps the ctime it was kept with, which a caller
// judging what changed since the kept index (the git guard's end) reads.
// A kept folder may be another index's, so each is copied, never written.
func (ix *Index) Settle() {
	same := ix.same
	ix.same = nil
	if len(same) <= sameSettled {
		return
	}
	for _, s := range same {
		c := *ix.folders[s.rel]
		c.Dev, c.Ino, c.CtimeSec, c.CtimeNsec, c.Racy = s.fresh.Dev, s.fresh.Ino, s.fresh.CtimeSec, s.fresh.CtimeNsec, s.fresh.Racy
		ix.folders[s.rel] = &c
	}
	ix.changed = true
}

// sameListing reports whether f, just read, holds what kept held: the
// same folder (device and inode), readable both times, and the same
// entries, names, kinds and inode numbers alike. It decodes nothing into
// kept and changes nothing of it, so it may run while kept's index is
// being saved (Each).
func (kept *Folder) sameListing(f *Folder) bool {
	if kept.Unreadable || f.Unreadable || kept.Dev != f.Dev || kept.Ino != f.Ino || kept.count != f.count {
		return false
	}
	if kept.raw == "" {
		return slices.Equal(kept.entries, f.entries)
	}
	i, same := 0, true
	err := eachEntry(kept.raw, kept.count, kept.Dirs, func(e Entry) {
		same = same && i < len(f.entries) && e == f.entries[i]
		i++
	})
	return err == nil && same && i == len(f.entries)
}

func (ix *Index) lookup(rel string) (*Folder, bool) {
	if ix == nil {
		return nil, false
	}
	return ix.Folder(rel)
}

func (f *Folder) unchanged(st *fsys.Stat_t) bool {
	return !f.Racy && !f.Unreadable && f.Dev == uint64(st.Dev) && f.Ino == st.Ino &&
		f.CtimeSec == st.Ctim.Sec && f.CtimeNsec == st.Ctim.Nsec
}

func join(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}

// readFolder reads the folder at abs, which lstat found as st. It is
// opened without following a symlink, and what is recorded is what the
// open descriptor is: its identity and ctime taken before its entries are
// read, so a change made while reading leaves a newer ctime behind. With
// statEntries (a file system whose getdents inode numbers may not be its
// stat's) each entry is looked at with fstatat.
func readFolder(abs string, st *fsys.Stat_t, statEntries bool, watch []string) *Folder {
	fd, err := fsys.Open(abs, fsys.O_RDONLY|fsys.O_DIRECTORY|fsys.O_NOFOLLOW|fsys.O_CLOEXEC, 0)
	if err != nil {
		// No permission, or swapped since the lstat: either way its
		// entries are unknown, and it never reads as empty.
		return &Folder{Dev: uint64(st.Dev), Ino: st.Ino, CtimeSec: st.Ctim.Sec, CtimeNsec: st.Ctim.Nsec, Unreadable: true}
	}
	defer fsys.Close(fd)
	var fst fsys.Stat_t
	if err := fsys.Fstat(fd, &fst); err != nil {
		return &Folder{Unreadable: true}
	}
	f := &Folder{Dev: uint64(fst.Dev), Ino: fst.Ino, CtimeSec: fst.Ctim.Sec, CtimeNsec: fst.Ctim.Nsec}
	entries, err := readEntries(fd, statEntries)
	if err != nil {
		f.Unreadable = true
		return f
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	f.setEntries(entries, watch)
	ctime := time.Unix(fst.Ctim.Sec, fst.Ctim.Nsec)
	f.Racy = !ctime.Before(time.Now().Add(-racyWindow))
	return f
}

// readEntries reads every entry of the open folder fd with getdents64.
func readEntries(fd int, statEntries bool) ([]Entry, error) {
	var entries []Entry
	bp := direntBuffers.Get().(*[]byte)
	defer direntBuffers.Put(bp)
	buf := *bp
	for {
		n, err := dirent.Read(fd, buf)
		if errors.Is(err, fsys.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return entries, nil
		}
		for b := buf[:n]; len(b) >= dirent.NameOff; {
			// A record (getdents): ino u64 first, reclen u16 at 16
			// (little-endian on every system built for), the type and
			// the NUL-terminated name where the OS puts them.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < dirent.NameOff || reclen > len(b) {
				return nil, fsys.EIO
			}
			rec := b[:reclen]
			b = b[reclen:]
			name := rec[dirent.NameOff:]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				e := Entry{Name: s, Kind: kindOf(rec[dirent.TypeOff]), Ino: le64(rec)}
				if statEntries || rec[dirent.TypeOff] == fsys.DT_UNKNOWN {
					var st fsys.Stat_t
					if err := fsys.Fstatat(fd, s, &st, fsys.AT_SYMLINK_NOFOLLOW); err != nil {
						continue // gone since
					}
					e.Kind, e.Ino = kindOfMode(uint32(st.Mode)), st.Ino
				}
				entries = append(entries, e)
			}
		}
	}
}

// direntBuffers are getdents's buffers, used again: a start scans many
// folders, and each buffer new from the heap is eight fresh pages.
var direntBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func kindOf(dt byte) Kind {
	switch dt {
	case fsys.DT_DIR:
		return KindDir
	case fsys.DT_REG:
		return KindFile
	case fsys.DT_LNK:
		return KindSymlink
	case fsys.DT_SOCK:
		return KindSocket
	}
	return KindOther
}

func kindOfMode(mode uint32) Kind {
	switch mode & fsys.S_IFMT {
	case fsys.S_IFDIR:
		return KindDir
	case fsys.S_IFREG:
		return KindFile
	case fsys.S_IFLNK:
		return KindSymlink
	case fsys.S_IFSOCK:
		return KindSocket
	}
	return KindOther
}

// fsInfo is what a file system is known to keep: ctimes that every
// change of a folder's entries moves (so a kept folder may be trusted by
// its ctime), and getdents inode numbers equal to stat's.
type fsInfo struct {
	ctimeKept, dinoKept bool
}
