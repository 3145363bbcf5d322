//go:build unix

// Package gitguard keeps a dsh-fs exec session from planting code that
// git runs for the person later (docs/design.md §10, the git guard).
//
// Nothing is walked before CMD starts. Start notes the time (before the
// child is started, less a slack for the kernel's coarse clock), the
// folders the mount layer pins and the identity of each root's own .git.
// Once CMD has ended, Check walks what a later git run in the roots would
// reach, with no budget: the roots, every symlinked folder wherever it
// points, and the git directories git's discovery finds from there. The
// roots' folders come from the tree indexes the mount plan read, checked
// again folder by folder by ctime (walk_index.go): only what changed
// during the session is read again. A
// code-running part is planted when its file's inode change time (ctime),
// or that of a folder on its git directory's path that the mount layer
// did not pin, is at or after the start: the session cannot set a ctime
// back (see Start). What is planted is moved into a quarantine
// folder inside the git directory, which git never reads: config entries
// cut out of the config (everything else byte-identical), hooks moved. A
// git directory with nothing planted is never touched.
//
// The guard is Unix's code, as dsh-fs exec's session runs only there; on
// Windows the package holds only its reading of git's config (config.go,
// parts.go).
package gitguard

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// Guard is what Start noted of a session.
type Guard struct {
	roots []sandbox.Root
	// writable are the canonical writable roots, tmp included: the guard
	// acts only beneath them, never on a repository elsewhere that a
	// pointer or a symlink names.
	writable []string
	// since is when the session started: a status change at or
	// after it is the session's.
	since time.Time
	home  string
	// fixed are the folders that cannot have been moved during the
	// session, whatever their ctime says (a change of their listing or
	// mode changes it too): the folders the mount layer pinned, the
	// roots it rebound, and an outermost root, whose parent the session
	// cannot write.
	fixed map[string]bool
	// sealed are the folders the mount layer covered with an empty
	// read-only tmpfs (deny_read folders, folders the supervisor could
	// not read): nothing the session did reaches beneath them, so the
	// end walk does not go in.
	sealed map[string]bool
	// rootGit is, per root's own .git folder, its device and inode at
	// the start: found the same at the end, it was not moved.
	rootGit map[string][2]uint64
	// indexes are the writable roots' tree indexes the mount plan read
	// before CMD started, by root: Check scans them again
	// (walk_index.go). What it finds is not saved: the session's
	// clean-up changes folders again (its placeholders go), and the next
	// plan reads those folders anyway.
	indexes map[string]*treeindex.Index
	// scanned is what Check's scans of the indexes did.
	scanned treeindex.Stats
}

// since is read from CLOCK_REALTIME_COARSE, the clock the kernel stamps
// ctime from (current_time; a file system with fine-grained timestamps
// stamps a time at or after it): a change made after Start, on any CPU,
// is stamped at or after since, with no slack. A file system that keeps
// whole seconds (or two, as FAT does) truncates the stamp; a ctime with
// no nanoseconds is compared by whole seconds, less one (after).

// Start notes what the guard needs of the session of roots before its
// child starts: the kernel's coarse time, the folders plan (the mount
// layer's, nil without one) pins or rebinds, and each root's .git; a few
// system calls per root, no walk. home is the person's home, for an
// include of "~/…". ctime decides what changed (docs/design.md §10): the
// kernel stamps it on every change of an inode, and nothing a session
// holds can set it or move the real-time clock back.
func Start(roots []sandbox.Root, plan *layout.MountPlan, home string) *Guard {
	var ts unix.Timespec
	since := time.Now()
	if unix.ClockGettime(ctimeClock, &ts) == nil {
		since = time.Unix(ts.Unix())
	}
	g := &Guard{roots: roots, writable: sandbox.RootPaths(roots), since: since, home: home,
		fixed: map[string]bool{}, sealed: map[string]bool{}, rootGit: map[string][2]uint64{},
		indexes: map[string]*treeindex.Index{}}
	for _, r := range g.writable {
		// An outermost root: its parent lies outside every writable root,
		// so the session cannot rename it.
		if !slices.ContainsFunc(g.writable, func(o string) bool { return o != r && sandbox.Beneath(o, r) }) {
			g.fixed[r] = true
		}
		var st unix.Stat_t
		if unix.Lstat(r+"/.git", &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			g.rootGit[r+"/.git"] = [2]uint64{uint64(st.Dev), st.Ino}
		}
	}
	if plan != nil {
		for _, ix := range plan.Indexes {
			g.indexes[ix.Root()] = ix
		}
		for _, p := range plan.Pinned {
			g.fixed[p] = true
		}
		for _, h := range plan.Hidden {
			g.sealed[h] = true
		}
		if plan.OutsideReadOnly {
			// Each writable root is a mount point of its own inside.
			for _, p := range plan.Writable {
				g.fixed[p] = true
			}
		}
	}
	return g
}

// after says whether a ctime of t is the session's: at or after since,
// or, for a stamp with no nanoseconds (a file system that keeps whole
// seconds, or two), in the second before since or later.
func (g *Guard) after(t time.Time) bool {
	if t.Nanosecond() == 0 {
		return t.Unix() >= g.since.Unix()-1
	}
	return !t.Before(g.since)
}

// Report is what Check did, for exec's end report.
type Report struct {
	// Neutralized are the git directories whose planted parts were
	// moved into their quarantine.
	Neutralized []Action `json:"neutralized"`
	// Failed are the git directories with planted parts the guard could
	// not move (git run there may still run them), and the folders it
	// could neither read nor move aside.
	Failed []Failure `json:"failed"`
	// NotChecked names the folders the guard could not read, even with
	// the rights it may restore: each is moved aside (MovedAside) or
	// listed under Failed. Never a folder skipped for its size: the walk
	// has no budget.
	NotChecked []string `json:"not_checked"`
	// MovedAside are the folders of NotChecked moved into a quarantine
	// folder beside them, where git run in the old path cannot reach
	// what they hold.
	MovedAside []Moved `json:"moved_aside"`
	// Restored names the folders of the session's user that the session
	// made unreadable to it (their mode changed during the session): the
	// guard gave their owner read and search rights back (u+rx) to check
	// them, and left them so.
	Restored []string `json:"restored"`
}

// Moved is a folder moved aside: From is where it was, To where it is.
type Moved struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Empty says whether there is nothing to report.
func (r Report) Empty() bool {
	return len(r.Neutralized)+len(r.Failed)+len(r.NotChecked)+len(r.MovedAside)+len(r.Restored) == 0
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

// Failure says what the guard found in one git directory (or folder) and
// why it could not act.
type Failure struct {
	GitDir  string   `json:"git_dir"`
	Planted []string `json:"planted"`
	Error   string   `json:"error"`
}

// Check, once the session's CMD has ended, walks what a later git run in
// the roots would reach (walk.go) and neutralizes in each git directory
// found beneath a writable root what was planted: the code-running parts
// whose files changed status since Start, or all of them where a folder
// on the git directory's path that is not fixed changed status (it may
// have been moved or renamed into place). A git directory outside the
// writable roots with planted parts is listed under Failed, never acted
// on. It acts through descriptors, never following a symlink and never
// writing outside the git directory.
func (g *Guard) Check() Report {
	rep := Report{Neutralized: []Action{}, Failed: []Failure{}, NotChecked: []string{}, MovedAside: []Moved{}, Restored: []string{}}
	w := newWalk(g, &rep)
	w.scanIndexes()
	w.run()
	defer w.finish()

	for _, d := range sortedKeys(w.gitDirs) {
		act, fail := g.check(d, w.gitDirs[d])
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

// check is Check for the one git directory d; moved says a folder on its
// path changed status during the session.
func (g *Guard) check(d string, moved bool) (*Action, *Failure) {
	fd, err := openGitDir(d)
	if err != nil {
		return nil, &Failure{GitDir: d, Planted: []string{}, Error: "cannot open it: " + err.Error()}
	}
	defer unix.Close(fd)
	now, err := readRepo(fd, g.home)
	if err != nil {
		return nil, &Failure{GitDir: d, Planted: []string{}, Error: err.Error()}
	}
	planted := g.planted(now, moved)
	if len(planted) == 0 {
		return nil, nil
	}
	names := func() []string {
		var out []string
		for _, p := range planted {
			out = append(out, p.file+": "+p.what)
		}
		return slices.Compact(out)
	}
	if !beneathAny(g.writable, d) {
		return nil, &Failure{GitDir: d, Planted: names(), Error: "outside the writable roots: not acted on"}
	}
	q, removed, unfrozen, err := neutralize(fd, now, planted)
	if err != nil {
		return nil, &Failure{GitDir: d, Planted: names(), Error: err.Error()}
	}
	return &Action{GitDir: d, Quarantine: d + "/" + q, Removed: removed, Unfrozen: unfrozen}, nil
}

// planted are the parts of r whose files changed status since Start, or
// all of them when its git directory was moved.
func (g *Guard) planted(r *repo, moved bool) []part {
	var out []part
	for _, p := range r.parts {
		if moved || g.after(p.changed) {
			out = append(out, p)
		}
	}
	return out
}
