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
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
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
