// Package gitguard keeps a dsh-fs exec session from planting code that
// git runs for the person later (docs/design.md §10, the git guard).
//
// The supervisor, outside the session, records the code-running parts of
// every git directory in the writable roots before CMD starts (Snapshot)
// and looks again once CMD has ended (Guard.Check). What appeared or
// changed in between is moved into a quarantine folder inside the git
// directory, which git never reads: config entries cut out of the config
// (everything else byte-identical), hooks moved. A git directory whose
// code-running parts did not change is never touched.
package gitguard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// Guard is what Snapshot recorded at a session's start.
type Guard struct {
	roots []sandbox.Root
	// writable are the canonical writable roots, tmp included: the guard
	// acts only beneath them, never on a repository elsewhere that a
	// pointer names.
	writable []string
	// since is just before the session started: a git directory found
	// only at the end holds a planted part when the part's files
	// changed status after it.
	since time.Time
	home  string
	byDir map[string]*repo
	byID  map[[2]uint64]*repo
	// Partial names each folder the start walk did not finish.
	Partial []string
}

// ctimeSlack is how far before Snapshot a status change still counts as
// the session's: file systems stamp ctime from a coarse clock, which lags
// the one time.Now reads by up to a tick.
const ctimeSlack = time.Second

// Snapshot records the code-running parts of every git directory that
// sandbox.GitDirs finds in roots. home is the person's home, for an
// include of "~/…".
func Snapshot(roots []sandbox.Root, home string) *Guard {
	g := &Guard{roots: roots, writable: sandbox.RootPaths(roots), since: time.Now().Add(-ctimeSlack), home: home,
		byDir: map[string]*repo{}, byID: map[[2]uint64]*repo{}}
	dirs, partial := sandbox.GitDirs(roots)
	g.Partial = partial
	for _, d := range dirs {
		fd, err := openGitDir(d)
		if err != nil {
			continue
		}
		r, err := readRepo(fd, home)
		unix.Close(fd)
		if err != nil {
			continue
		}
		g.byDir[d] = r
		g.byID[[2]uint64{r.dev, r.ino}] = r
	}
	return g
}

// Repos is how many git directories the snapshot holds.
func (g *Guard) Repos() int { return len(g.byDir) }

// Report is what Check did, for exec's end report.
type Report struct {
	// Neutralized are the git directories whose planted parts were
	// moved into their quarantine.
	Neutralized []Action `json:"neutralized"`
	// Failed are the git directories with planted parts the guard could
	// not move: git run there may still run them.
	Failed []Failure `json:"failed"`
	// NotChecked names the folders whose walk stopped at the budget, at
	// the start or the end: git directories beyond were not checked.
	NotChecked []string `json:"not_checked"`
}

// Empty says whether there is nothing to report.
func (r Report) Empty() bool {
	return len(r.Neutralized) == 0 && len(r.Failed) == 0 && len(r.NotChecked) == 0
}

// Action says what the guard did in one git directory.
type Action struct {
	GitDir string `json:"git_dir"`
	// Quarantine is the folder inside GitDir that now holds what was
	// removed: config.removed (the cut entries, under their sections),
	// whole files and hooks by name.
	Quarantine string `json:"quarantine"`
	// Removed names each part: "config: core.fsmonitor",
	// "hooks/pre-commit".
	Removed []string `json:"removed"`
	// Unfrozen names what the guard cleared the immutable or append-only
	// flag of to move it ("." for the git directory itself).
	Unfrozen []string `json:"unfrozen"`
}

// Failure says what the guard found in one git directory and why it
// could not act.
type Failure struct {
	GitDir  string   `json:"git_dir"`
	Planted []string `json:"planted"`
	Error   string   `json:"error"`
}

// Check walks the roots again, once the session's CMD has ended, and
// neutralizes in each git directory what was planted since Snapshot: the
// code-running parts it did not have then (a git directory found at its
// old path, or moved, by its device and inode), or, in a git directory
// that did not exist then, the parts whose files changed since. It acts
// only beneath the writable roots, through descriptors, never following
// a symlink and never writing outside the git directory.
func (g *Guard) Check() Report {
	rep := Report{Neutralized: []Action{}, Failed: []Failure{}}
	dirs, partial := sandbox.GitDirs(g.roots)
	rep.NotChecked = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(g.Partial), partial...))))
	if rep.NotChecked == nil {
		rep.NotChecked = []string{}
	}
	for _, d := range dirs {
		if !beneathAny(g.writable, d) {
			continue
		}
		act, fail := g.check(d)
		switch {
		case fail != nil:
			rep.Failed = append(rep.Failed, *fail)
		case act != nil:
			rep.Neutralized = append(rep.Neutralized, *act)
		}
	}
	return rep
}

func beneathAny(roots []string, p string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return sandbox.Beneath(r, p) })
}

// check is Check for the one git directory d.
func (g *Guard) check(d string) (*Action, *Failure) {
	fd, err := openGitDir(d)
	if err != nil {
		return nil, &Failure{GitDir: d, Planted: []string{}, Error: "cannot open it: " + err.Error()}
	}
	defer unix.Close(fd)
	now, err := readRepo(fd, g.home)
	if err != nil {
		return nil, &Failure{GitDir: d, Planted: []string{}, Error: err.Error()}
	}
	before := g.byDir[d]
	if before == nil {
		before = g.byID[[2]uint64{now.dev, now.ino}]
	}
	planted := g.planted(before, now)
	if len(planted) == 0 {
		return nil, nil
	}
	q, removed, unfrozen, err := neutralize(fd, now, planted)
	if err != nil {
		names := []string{}
		for _, p := range planted {
			names = append(names, p.file+": "+p.what)
		}
		return nil, &Failure{GitDir: d, Planted: slices.Compact(names), Error: err.Error()}
	}
	return &Action{GitDir: d, Quarantine: d + "/" + q, Removed: removed, Unfrozen: unfrozen}, nil
}

// planted are the parts of now that before did not have; without a
// before, the parts whose files changed status since the snapshot.
func (g *Guard) planted(before, now *repo) []part {
	var out []part
	had := map[string]bool{}
	if before != nil {
		for _, p := range before.parts {
			had[p.id] = true
		}
	}
	for _, p := range now.parts {
		switch {
		case before != nil && !had[p.id]:
			out = append(out, p)
		case before == nil && !p.changed.Before(g.since):
			out = append(out, p)
		}
	}
	return out
}

// quarantinePrefix begins the name of the folder, inside a git
// directory, where the guard puts what it removed; git reads no such
// folder. Each action gets a fresh one, its name ending in the time and
// random bytes, so a session cannot block it by making the name first.
const quarantinePrefix = "dsh-fs-quarantine-"

// neutralize moves the parts planted of the git directory gfd (read as r)
// into a fresh quarantine folder, and returns that folder's name
// relative to gfd, what it moved and what it unfroze to move it.
func neutralize(gfd int, r *repo, planted []part) (q string, removed, unfrozen []string, err error) {
	unfrozen = []string{}
	thaw := func(dirfd int, name, shown string) error {
		cleared, err := unfreeze(dirfd, name)
		if cleared {
			unfrozen = append(unfrozen, shown)
		}
		return err
	}
	if err := thaw(gfd, "", "."); err != nil {
		return "", nil, unfrozen, fmt.Errorf("clear the immutable flag: %w", err)
	}
	ensureWritable(gfd)
	var name string
	for try := 0; try < 10; try++ {
		var rnd [6]byte
		rand.Read(rnd[:])
		name = quarantinePrefix + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
		if err = unix.Mkdirat(gfd, name, 0o700); err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return "", nil, unfrozen, fmt.Errorf("make the quarantine folder: %w", err)
	}
	qfd, err := unix.Openat(gfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, unfrozen, fmt.Errorf("open the quarantine folder: %w", err)
	}
	defer unix.Close(qfd)
	owner(qfd, r)
	rel := name
	// Config files: the planted entries cut, or the whole file moved.
	for _, file := range []string{"config", "config.worktree"} {
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
			continue
		}
		if err := thaw(gfd, file, file); err != nil {
			return rel, removed, unfrozen, fmt.Errorf("%s: clear the immutable flag: %w", file, err)
		}
		var err error
		if whole {
			// The file goes whole, with every entry in it: it is named by
			// what made it go.
			err = moveEntry(gfd, file, qfd, file)
			what = nil
			for _, p := range planted {
				if p.file == file && p.entry == nil {
					what = append(what, p.what)
				}
			}
		} else {
			err = cutEntries(gfd, file, qfd, cut, r)
		}
		if err != nil {
			return rel, removed, unfrozen, fmt.Errorf("%s: %w", file, err)
		}
		removed = append(removed, slices.Compact(what)...)
	}
	// Hooks: each moved, not followed, its execute bits cleared.
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
			if err := moveEntry(gfd, "hooks", qfd, "hooks"); err != nil {
				return rel, removed, unfrozen, fmt.Errorf("hooks: %w", err)
			}
			removed = append(removed, p.what)
		case strings.HasPrefix(p.file, "hooks/"):
			hook := strings.TrimPrefix(p.file, "hooks/")
			if hfd < 0 {
				if hfd, err = unix.Openat(gfd, "hooks", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
					return rel, removed, unfrozen, fmt.Errorf("hooks: %w", err)
				}
				if err := thaw(hfd, "", "hooks"); err != nil {
					return rel, removed, unfrozen, fmt.Errorf("hooks: clear the immutable flag: %w", err)
				}
				ensureWritable(hfd)
				unix.Mkdirat(qfd, "hooks", 0o700)
				if qh, err = unix.Openat(qfd, "hooks", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
					return rel, removed, unfrozen, fmt.Errorf("quarantine hooks: %w", err)
				}
				owner(qh, r)
			}
			if err := thaw(hfd, hook, p.file); err != nil {
				return rel, removed, unfrozen, fmt.Errorf("%s: clear the immutable flag: %w", p.file, err)
			}
			if err := moveEntry(hfd, hook, qh, hook); err != nil {
				return rel, removed, unfrozen, fmt.Errorf("%s: %w", p.file, err)
			}
			removed = append(removed, p.what)
		}
	}
	return rel, removed, unfrozen, nil
}

// ensureWritable gives the owner of the folder fd the rights to change
// it, where this process is that owner: a session running as the person
// can chmod a git directory it planted so that the guard, running as the
// same person, could not otherwise move what it planted.
func ensureWritable(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && int(st.Uid) == os.Geteuid() && st.Mode&0o700 != 0o700 {
		unix.Fchmod(fd, st.Mode&0o7777|0o700)
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
	if err := unix.Renameat2(from, name, to, newName, unix.RENAME_NOREPLACE); err != nil {
		return err
	}
	fd, err := unix.Openat(to, newName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // a symlink or a special file: moved is enough
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		unix.Fchmod(fd, st.Mode&0o7777&^0o7111)
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
	if err := writeNew(gfd, tmp, kept, st.Mode&0o7777, &repo{uid: st.Uid, gid: st.Gid}); err != nil {
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
