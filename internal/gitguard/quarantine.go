//go:build unix

package gitguard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The guard's one writer: everything it changes in a git directory is
// done here, through descriptors of the git directory and of the
// quarantine folder it makes in it, never by a path from outside.

// quarantinePrefix begins the name of the folder, inside a git
// directory, where the guard puts what it removed; git reads no such
// folder. Each action gets a fresh one, its name ending in the time and
// random bytes, so a session cannot block it by making the name first.
const quarantinePrefix = "dsh-fs-quarantine-"

// neutralize moves the parts planted of the git directory gfd (read as r)
// into a fresh quarantine folder, and returns that folder's name
// relative to gfd, what it moved and what it unfroze to move it.
func neutralize(gfd int, r *repo, planted []part) (q string, removed, unfrozen []string, err error) {
	m := &quarantining{gfd: gfd, r: r, unfrozen: []string{}}
	if err := m.thaw(gfd, "", "."); err != nil {
		return "", nil, m.unfrozen, fmt.Errorf("clear the immutable flag: %w", err)
	}
	ensureWritable(gfd)
	name, err := makeQuarantine(gfd)
	if err != nil {
		return "", nil, m.unfrozen, fmt.Errorf("make the quarantine folder: %w", err)
	}
	m.qfd, err = unix.Openat(gfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, m.unfrozen, fmt.Errorf("open the quarantine folder: %w", err)
	}
	defer unix.Close(m.qfd)
	owner(m.qfd, r)
	for _, file := range []string{"config", "config.worktree"} {
		if err := m.moveConfig(file, planted); err != nil {
			return name, m.removed, m.unfrozen, err
		}
	}
	if err := m.moveHooks(planted); err != nil {
		return name, m.removed, m.unfrozen, err
	}
	return name, m.removed, m.unfrozen, nil
}

// quarantining is one neutralize call: the git directory gfd (read as r),
// the quarantine folder qfd, and what has been moved (removed) and
// unfrozen so far, which a failure part way reports too.
type quarantining struct {
	gfd, qfd          int
	r                 *repo
	removed, unfrozen []string
}

// thaw clears the immutable and append-only flags of name in dirfd (the
// folder itself for ""), noting it as shown when it cleared one.
func (m *quarantining) thaw(dirfd int, name, shown string) error {
	cleared, err := unfreeze(dirfd, name)
	if cleared {
		m.unfrozen = append(m.unfrozen, shown)
	}
	return err
}

// makeQuarantine makes a fresh quarantine folder in gfd, named for the
// time and a random part, and returns its name.
func makeQuarantine(gfd int) (string, error) {
	var name string
	var err error
	for try := 0; try < 10; try++ {
		var rnd [6]byte
		rand.Read(rnd[:])
		name = quarantinePrefix + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
		if err = unix.Mkdirat(gfd, name, 0o700); err != unix.EEXIST {
			break
		}
	}
	return name, err
}

// moveConfig quarantines what was planted in the config file file: the
// planted entries cut, or the whole file moved.
func (m *quarantining) moveConfig(file string, planted []part) error {
	var cut []*Entry
	var what []string
	whole := false
	for _, p := range planted {
		if p.file != file {
			continue
		}
		what = append(what, file+": "+p.what)
		if p.entry == nil {
			whole = true
		} else if !slices.Contains(cut, p.entry) {
			cut = append(cut, p.entry)
		}
	}
	if len(what) == 0 {
		return nil
	}
	if err := m.thaw(m.gfd, file, file); err != nil {
		return fmt.Errorf("%s: clear the immutable flag: %w", file, err)
	}
	var err error
	if whole {
		// The file goes whole, with every entry in it: it is named by
		// what made it go.
		err = moveEntry(m.gfd, file, m.qfd, file)
		what = nil
		for _, p := range planted {
			if p.file == file && p.entry == nil {
				what = append(what, p.what)
			}
		}
	} else {
		err = cutEntries(m.gfd, file, m.qfd, cut, m.r)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	m.removed = append(m.removed, slices.Compact(what)...)
	return nil
}

// moveHooks quarantines the planted hooks: each moved, not followed, its
// execute bits cleared; the hooks folder whole when it was planted.
func (m *quarantining) moveHooks(planted []part) (err error) {
	var hfd, qh = -1, -1
	defer func() {
		if hfd >= 0 {
			unix.Close(hfd)
		}
		if qh >= 0 {
			unix.Close(qh)
		}
	}()
	for _, p := range planted {
		switch {
		case p.file == "hooks":
			if err := moveEntry(m.gfd, "hooks", m.qfd, "hooks"); err != nil {
				return fmt.Errorf("hooks: %w", err)
			}
			m.removed = append(m.removed, p.what)
		case strings.HasPrefix(p.file, "hooks/"):
			hook := strings.TrimPrefix(p.file, "hooks/")
			if hfd < 0 {
				if hfd, err = unix.Openat(m.gfd, "hooks", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
					return fmt.Errorf("hooks: %w", err)
				}
				if err := m.thaw(hfd, "", "hooks"); err != nil {
					return fmt.Errorf("hooks: clear the immutable flag: %w", err)
				}
				ensureWritable(hfd)
				unix.Mkdirat(m.qfd, "hooks", 0o700)
				if qh, err = unix.Openat(m.qfd, "hooks", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
					return fmt.Errorf("quarantine hooks: %w", err)
				}
				owner(qh, m.r)
			}
			if err := m.thaw(hfd, hook, p.file); err != nil {
				return fmt.Errorf("%s: clear the immutable flag: %w", p.file, err)
			}
			if err := moveEntry(hfd, hook, qh, hook); err != nil {
				return fmt.Errorf("%s: %w", p.file, err)
			}
			m.removed = append(m.removed, p.what)
		}
	}
	return nil
}

// ensureWritable gives the owner of the folder fd the rights to change
// it, where this process is that owner: a session running as the person
// can chmod a git directory it planted so that the guard, running as the
// same person, could not otherwise move what it planted.
func ensureWritable(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && int(st.Uid) == os.Geteuid() && st.Mode&0o700 != 0o700 {
		unix.Fchmod(fd, uint32(st.Mode&0o7777|0o700))
	}
}

// owner gives the folder or file fd to the git directory's owner, where
// the guard runs as root: what it makes in a person's repository stays
// the person's to remove.
func owner(fd int, r *repo) {
	if os.Geteuid() == 0 {
		unix.Fchown(fd, int(r.uid), int(r.gid))
	}
}

// moveEntry renames the entry name of the folder from to the folder to,
// without following it if it is a symlink, and clears the execute bits of
// a regular file it moved.
func moveEntry(from int, name string, to int, newName string) error {
	if err := renameNoReplace(from, name, to, newName); err != nil {
		return err
	}
	fd, err := unix.Openat(to, newName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // a symlink or a special file: moved is enough
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		unix.Fchmod(fd, uint32(st.Mode&0o7777&^0o7111))
	}
	return nil
}

// cutEntries writes the config file name of gfd again without the
// entries cut (parsed from what it holds now), atomically (a new file
// renamed over it) and with its mode and owner; the cut entries go, under
// their sections, to config.removed in the quarantine qfd. The config is
// read again here: if it is not the file the parts were read from any
// more, nothing is written.
func cutEntries(gfd int, name string, qfd int, cut []*Entry, r *repo) error {
	data, st, ok, err := readAt(gfd, name, false)
	if err != nil || !ok {
		return fmt.Errorf("read again: %v", err)
	}
	entries, err := ParseConfig(data)
	if err != nil {
		return fmt.Errorf("changed since it was read: %w", err)
	}
	// The same entries, found again by key, value and place.
	var drop []Entry
	for _, c := range cut {
		i := slices.IndexFunc(entries, func(e Entry) bool {
			return e.Start == c.Start && e.End == c.End && e.Key() == c.Key() && e.Value == c.Value
		})
		if i < 0 {
			return fmt.Errorf("changed since it was read")
		}
		drop = append(drop, entries[i])
	}
	slices.SortFunc(drop, func(a, b Entry) int { return a.Start - b.Start })
	kept, err := removeEntries(data, drop)
	if err != nil {
		return err
	}
	var removed strings.Builder
	for _, e := range drop {
		if e.Subsection != "" {
			fmt.Fprintf(&removed, "[%s %q]\n", e.Section, e.Subsection)
		} else {
			fmt.Fprintf(&removed, "[%s]\n", e.Section)
		}
		fmt.Fprintf(&removed, "\t%s\n", data[e.Start:e.End])
	}
	if err := writeNew(qfd, name+".removed", []byte(removed.String()), 0o600, r); err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	tmp := fmt.Sprintf(".%s.dsh-fs-%d", name, os.Getpid())
	unix.Unlinkat(gfd, tmp, 0)
	if err := writeNew(gfd, tmp, kept, uint32(st.Mode&0o7777), &repo{uid: st.Uid, gid: st.Gid}); err != nil {
		return err
	}
	var now unix.Stat_t
	if err := unix.Fstatat(gfd, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil || now.Ino != st.Ino || now.Dev != st.Dev {
		unix.Unlinkat(gfd, tmp, 0)
		return fmt.Errorf("replaced while the guard wrote it")
	}
	if err := unix.Renameat(gfd, tmp, gfd, name); err != nil {
		unix.Unlinkat(gfd, tmp, 0)
		return err
	}
	return nil
}

// writeNew creates the file name in the folder dirfd, which must not
// exist, with data, mode and (as root) r's owner, and syncs it.
func writeNew(dirfd int, name string, data []byte, mode uint32, r *repo) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	owner(fd, r)
	unix.Fchmod(fd, mode)
	if _, err := f.Write(data); err != nil {
		f.Close()
		unix.Unlinkat(dirfd, name, 0)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		unix.Unlinkat(dirfd, name, 0)
		return err
	}
	return f.Close()
}

// unfreeze clears the immutable and append-only flags of the entry name
// of the folder dirfd ("" for dirfd itself), where this process is root
// and they are set, and reports whether it cleared any. It never follows
// a symlink and opens nothing but a regular file or a folder.
func unfreeze(dirfd int, name string) (bool, error) {
	if os.Geteuid() != 0 {
		return false, nil
	}
	return clearFlags(dirfd, name)
}

// grantRead gives the owner of the folder name of pfd, this process's
// user, read and search rights on it (mode|u+rx) and opens it for
// listing: a folder the session made unreadable to hide what lies
// beneath it from the guard, or the person's own.
func grantRead(pfd int, name string, mode uint32) (int, error) {
	if err := unix.Fchmodat(pfd, name, mode|0o500, 0); err != nil {
		return -1, err
	}
	return openFolder(pfd, name)
}

// putMode puts the mode of the folder open as fd back, and closes fd.
func putMode(fd int, mode uint32) {
	unix.Fchmod(fd, mode)
	unix.Close(fd)
}

// moveAside renames the folder name of pfd, which the guard cannot read,
// to a fresh name beside it, dsh-fs-quarantine-<time>-<random>-<name>:
// git run at its old path finds nothing, and nothing is lost. The folder
// stays in its parent: moving a folder to another parent needs the
// right to write it (its ".." changes), which the guard lacks on a
// folder it cannot read. Where it cannot, the report says so under
// Failed.
func (w *walk) moveAside(pfd int, name, path string) {
	var err error
	for try := 0; try < 10; try++ {
		var rnd [6]byte
		rand.Read(rnd[:])
		to := quarantinePrefix + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:]) + "-" + name
		if len(to) > 255 {
			to = to[:255]
		}
		if err = renameNoReplace(pfd, name, pfd, to); err == nil {
			w.rep.MovedAside = append(w.rep.MovedAside, Moved{From: path, To: filepath.Dir(path) + "/" + to})
			return
		}
		if err != unix.EEXIST {
			break
		}
	}
	w.rep.Failed = append(w.rep.Failed, Failure{GitDir: path, Planted: []string{"a folder the guard cannot read"},
		Error: "cannot move it aside: " + err.Error()})
}
