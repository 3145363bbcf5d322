package treeindex

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Store is a folder of index files, one per root, that only this user
// (and root) can write. The caller chooses where it lies: somewhere no
// session can write (docs/design.md §10, the mount layer).
type Store struct {
	dir string
	max int // the index files it keeps (storeMax; a test's lower)
}

// OpenStore returns the store in dir, an existing folder that is no
// symlink, owned by this process's effective uid and of mode 0700:
// anything else is refused, since whoever else could write it could
// make a root's index say a folder holds nothing.
func OpenStore(dir string) (*Store, error) {
	var st fsys.Stat_t
	if err := fsys.Lstat(dir, &st); err != nil {
		return nil, err
	}
	switch {
	case st.Mode&fsys.S_IFMT != fsys.S_IFDIR:
		return nil, fmt.Errorf("tree index folder %s is not a folder", dir)
	case st.Uid != uint32(os.Geteuid()):
		return nil, fmt.Errorf("tree index folder %s is owned by uid %d, not %d", dir, st.Uid, os.Geteuid())
	case st.Mode&0o7777 != 0o700:
		return nil, fmt.Errorf("tree index folder %s has mode %04o, not 0700", dir, st.Mode&0o7777)
	}
	return &Store{dir: dir, max: storeMax}, nil
}

// fileName is the name of root's index file: a hash of its canonical
// path and of its device and inode, so a root removed and made again, or
// another file system mounted there, starts afresh.
func fileName(root string) (string, bool) {
	var st fsys.Stat_t
	if fsys.Lstat(root, &st) != nil {
		return "", false
	}
	h := sha256.Sum256([]byte(root + "\x00" + strconv.FormatUint(uint64(st.Dev), 10) + "\x00" + strconv.FormatUint(st.Ino, 10)))
	return "tree-" + hex.EncodeToString(h[:16]), true
}

// Load returns the index kept for root, or nil when there is none to
// trust: missing, not a regular file, not owned by this uid, of another
// mode than 0600, with several links, unreadable, or failing to parse.
// Such a file is ignored, and the next Save replaces it.
func (s *Store) Load(root string) *Index {
	if s == nil {
		return nil
	}
	name, ok := fileName(root)
	if !ok {
		return nil
	}
	fd, err := fsys.Open(filepath.Join(s.dir, name), fsys.O_RDONLY|fsys.O_NOFOLLOW|fsys.O_NONBLOCK|fsys.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer fsys.Close(fd)
	var st fsys.Stat_t
	if fsys.Fstat(fd, &st) != nil || st.Mode&fsys.S_IFMT != fsys.S_IFREG || st.Uid != uint32(os.Geteuid()) ||
		st.Mode&0o7777 != 0o600 || st.Nlink != 1 || st.Size > maxIndexBytes {
		return nil
	}
	// The file is mapped, not read: a read copies it into new pages of
	// this process, a page fault each (hundreds at 50,000 entries, about
	// 10 us each on a virtual machine), where a mapping uses the page
	// cache's own. The index keeps substrings of it for the process's
	// life, so it is never unmapped. Only this uid can write the store
	// (OpenStore), where no session reaches, and Save never writes a
	// file in place: it renames a new one over it, and the mapping keeps
	// the old. (Truncated in place by this uid's own hand, outside any
	// session, the file would end this process with SIGBUS.)
	data, err := mapFile(fd, int(st.Size))
	if err != nil {
		return nil
	}
	ix, err := decode(data)
	if err != nil || ix.root != root {
		unmapFile(data)
		return nil
	}
	// Its time says when it was last used, not last changed: an index
	// loaded and found unchanged is not saved again, and the store keeps
	// the ones used last (prune).
	touch(fd)
	return ix
}

// maxIndexBytes bounds an index file Load maps, so its size always fits
// an int: far more than a tree of millions of entries takes.
const maxIndexBytes = 1 << 30

// storeMax bounds the index files a store keeps: one a root ever seen
// would grow without end (every temporary folder a harness or a test
// made a workspace).
const storeMax = 256

// staleTemp is how old a temporary file of Save is when prune takes it
// for one a killed process left.
const staleTemp = time.Hour

// prune removes the index files used longest ago (their times: Load sets
// them) beyond s.max, keeping keep, and the temporary files of saves
// that never finished. A root's file removed costs its next session one
// cold scan, never its correctness. It runs when a save adds a file.
func (s *Store) prune(keep string) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	type kept struct {
		name string
		used time.Time
	}
	var files []kept
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		switch name := e.Name(); {
		case strings.HasPrefix(name, ".tmp-tree-"):
			if time.Since(info.ModTime()) > staleTemp {
				os.Remove(filepath.Join(s.dir, name))
			}
		case strings.HasPrefix(name, "tree-") && name != keep:
			files = append(files, kept{name, info.ModTime()})
		}
	}
	if len(files) < s.max {
		return
	}
	slices.SortFunc(files, func(a, b kept) int { return a.used.Compare(b.used) })
	for _, f := range files[:len(files)-(s.max-1)] {
		os.Remove(filepath.Join(s.dir, f.name))
	}
}

// Save writes ix as its root's index file: to a temporary file of the
// store's folder, mode 0600, then renamed over the old one, so a reader
// sees the old file or the new one whole. Sessions that save at once
// each rename a whole file; the last wins, and either is valid.
func (s *Store) Save(ix *Index) error {
	name, ok := fileName(ix.root)
	if !ok {
		return errors.New("tree index: root " + ix.root + " is gone")
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+name+"-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(encode(ix))
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	_, existed := os.Lstat(filepath.Join(s.dir, name))
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if existed != nil {
		s.prune(name)
	}
	return nil
}

// Sync saves ix when it differs from what s holds (Changed): a caller
// that sets notes after its Scan syncs once, after. A nil s keeps
// nothing.
func (s *Store) Sync(ix *Index) {
	if s != nil && ix.Changed() {
		if s.Save(ix) == nil {
			ix.changed = false
		}
	}
}
