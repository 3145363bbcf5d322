package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// deny_read by identity. A hard link is the same file under another name:
// a link in the workspace to ~/.ssh/id_ed25519 reads the key while its
// own path matches nothing. So a regular file with more than one link is
// also denied when it is the same file (device and inode) as a file an
// anchored deny_read glob covers, one that starts at an absolute folder
// ("/etc/secrets/**", "~/.ssh/**" once "~" is expanded): those trees are
// bounded, and walked once per call, lazily, the first time a file with
// several links is met, up to MaxIdentityEntries entries.
//
// An unanchored glob ("**/.env", or "secret", which the fence reads as
// "**/secret") names files anywhere: its tree is the whole file system,
// which no call can walk. It catches a hard link only by the link's own
// name: a link named .env is denied, the same file linked as notes.txt
// is not. Secrets that must hold against hard links belong under an
// anchored glob.

// MaxIdentityEntries bounds the entries (names read in the folders
// walked) of one call's walk of the anchored deny_read trees. Past it, a
// file with several links cannot be told apart from the files not yet
// seen, and is denied.
const MaxIdentityEntries = 20000

// fileID is a file's identity.
type fileID struct{ dev, ino uint64 }

// denyIDs are the identities of the files with several links that the
// anchored deny_read globs cover, each with the glob to name in a denial.
type denyIDs struct {
	ids map[fileID]string
	// cut is the glob whose tree was not walked to its end for want of
	// budget; "" when every tree was.
	cut string
	// budget is what is left of MaxIdentityEntries.
	budget int
}

// identityBudget is the entries f's identity walk may read:
// MaxIdentityEntries, or less where this package's tests set idBudget.
func (f *Fence) identityBudget() int {
	if f.idBudget > 0 {
		return f.idBudget
	}
	return MaxIdentityEntries
}

// idCache holds the identities of one fence, so a listing, or a write
// with a --from source, walks the trees once. The fence of a call lives as
// long as the call; a new fence is a new call, and walks again, so the
// identities never outlive what they were read from by more than a call.
var idCache struct {
	sync.Mutex
	fence *Fence
	ids   *denyIDs
}

// deniedIdentity returns the anchored deny_read glob that covers a file
// that is the same as the regular file st, when st has more than one
// link. A file with one link is its own path, which deniedRead judges.
//
// Inside a session the mount layer has hidden the deny_read files, so no
// walk finds them: the identities the supervisor saw before hiding them
// (Policy.DenyIdentities) are looked up first, whatever st's number of
// links (the empty file the mount layer binds over a hidden hard link
// has one, and is among them).
func (f *Fence) deniedIdentity(st *fsys.Stat_t) (string, bool) {
	if st.Mode&fsys.S_IFMT != fsys.S_IFREG {
		return "", false
	}
	if len(f.policy.DenyIdentities) > 0 {
		f.sessionIDs.once.Do(func() {
			f.sessionIDs.ids = map[fileID]string{}
			for _, d := range f.policy.DenyIdentities {
				f.sessionIDs.ids[fileID{d.Dev, d.Ino}] = d.Glob
			}
		})
		if g, ok := f.sessionIDs.ids[fileID{uint64(st.Dev), uint64(st.Ino)}]; ok {
			return g, true
		}
	}
	if st.Nlink < 2 || !f.hasAnchoredDenyRead() {
		return "", false
	}
	idCache.Lock()
	if idCache.fence != f {
		idCache.fence, idCache.ids = f, walkIdentities(f.denyRead, f.identityBudget())
	}
	ids := idCache.ids
	idCache.Unlock()
	if g, ok := ids.ids[fileID{uint64(st.Dev), uint64(st.Ino)}]; ok {
		return g, true
	}
	if ids.cut != "" {
		return ids.cut + " (a file with several links, and more than " + strconv.Itoa(MaxIdentityEntries) +
			" entries to compare it with)", true
	}
	return "", false
}

func (f *Fence) hasAnchoredDenyRead() bool {
	for _, g := range f.denyRead {
		if strings.HasPrefix(g.match, "/") {
			return true
		}
	}
	return false
}

// walkIdentities walks the tree of every anchored glob, by handle and
// never through a symlink, looking only where the glob could match, and
// collects the regular files with several links the glob covers. A tree
// that does not exist, or cannot be opened, holds nothing this process
// could have linked to.
func walkIdentities(globs []denyGlob, budget int) *denyIDs {
	ids := &denyIDs{ids: map[fileID]string{}, budget: budget}
	seen := map[string]bool{}
	for _, g := range globs {
		if !strings.HasPrefix(g.match, "/") {
			continue
		}
		parts := pathmatch.Components(g.match)
		n := 0
		for n < len(parts) && !strings.ContainsAny(parts[n], "*?[\\") {
			n++
		}
		rest := pathmatch.FoldedParts(parts[n:])
		top, err := walkPath("/"+strings.Join(parts[:n], "/"), walkSpec{flags: oPath, followLast: true})
		if err != nil {
			continue
		}
		key := top.path + "\x00" + strings.Join(rest, "/")
		if seen[key] {
			fsys.Close(top.fd)
			continue
		}
		seen[key] = true
		switch top.st.Mode & fsys.S_IFMT {
		case fsys.S_IFREG:
			if top.st.Nlink > 1 && pathmatch.CoverParts(rest, nil) {
				ids.ids[fileID{uint64(top.st.Dev), uint64(top.st.Ino)}] = g.shown
			}
		case fsys.S_IFDIR:
			if fd, err := openRead(top.fd, ".", fsys.O_RDONLY|fsys.O_DIRECTORY); err == nil {
				ids.walk(fd, nil, rest, g.shown)
			}
		}
		fsys.Close(top.fd)
		if ids.cut != "" {
			break
		}
	}
	return ids
}

// walk collects, beneath the folder dirfd (at rel in the glob's tree),
// the files rest covers. It closes dirfd. It returns false once the
// budget is spent.
func (ids *denyIDs) walk(dirfd int, rel, rest []string, shown string) bool {
	dir := os.NewFile(uintptr(dirfd), "")
	defer dir.Close()
	for {
		names, err := dir.Readdirnames(256)
		if err != nil {
			return true // the end of the folder, or a folder that cannot be read
		}
		for _, name := range names {
			if ids.budget == 0 {
				ids.cut = shown
				return false
			}
			ids.budget--
			child := append(rel[:len(rel):len(rel)], pathmatch.Folded(name))
			if !pathmatch.MayCover(rest, child) {
				continue
			}
			var st fsys.Stat_t
			if fsys.Fstatat(dirfd, name, &st, fsys.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			switch st.Mode & fsys.S_IFMT {
			case fsys.S_IFREG:
				if st.Nlink > 1 && pathmatch.CoverParts(rest, child) {
					ids.ids[fileID{uint64(st.Dev), uint64(st.Ino)}] = shown
				}
			case fsys.S_IFDIR:
				fd, err := openRead(dirfd, name, fsys.O_RDONLY|fsys.O_DIRECTORY)
				if err == nil && !ids.walk(fd, child, rest, shown) {
					return false
				}
			}
		}
	}
}

// DenyIdentities are the identities of the files with several links that
// the fence's anchored deny_read globs cover, walked with at most budget
// entries looked at, each with the glob to name in a denial; cut is the
// glob whose tree was not walked to its end, or "".
func (f *Fence) DenyIdentities(budget int) (ids []policy.DenyIdentity, cut string) {
	w := walkIdentities(f.denyRead, budget)
	for id, g := range w.ids {
		ids = append(ids, policy.DenyIdentity{Dev: id.dev, Ino: id.ino, Glob: g})
	}
	return ids, w.cut
}

// DenyReadGlobs are the fence's deny_read globs in order: each as matched
// (canonical) and as named in a denial.
func (f *Fence) DenyReadGlobs() (match, shown []string) {
	for _, g := range f.denyRead {
		match, shown = append(match, g.match), append(shown, g.shown)
	}
	return match, shown
}

// denyIndex is the fence's matcher, compiled on first use.
type denyIndex struct {
	once sync.Once
	m    *pathmatch.Matcher
}

// DenyMatcher is the fence's deny_read list, compiled on first use; the
// index its First returns is that of DenyReadGlobs.
func (f *Fence) DenyMatcher() *pathmatch.Matcher {
	f.denyIdx.once.Do(func() {
		match, _ := f.DenyReadGlobs()
		f.denyIdx.m = pathmatch.NewMatcher(match)
	})
	return f.denyIdx.m
}
