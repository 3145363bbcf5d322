//go:build unix

package supervisor

import (
	"encoding/json"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/gitguard"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// The git guard of a session (docs/design.md §10): the supervisor notes
// the start before CMD starts (no walk), and once CMD has ended walks
// what git would reach in the writable roots and neutralizes what the
// session planted.

// startGitGuard notes the start of the session of s for the guard, with
// the mount layer's plan (nil without one), and says in shell what
// holds. danger-full-access has none: the harness asked for full access,
// and nothing fences the shell.
func startGitGuard(lookupEnv func(string) (string, bool), s *config.Settings, roots []sandbox.Root, shell *wire.Shell) *gitguard.Guard {
	if s.Policy.Mode == policy.DangerFullAccess {
		shell.Git = "not held: danger-full-access mode"
		return nil
	}
	home, _ := lookupEnv("HOME")
	g := gitguard.Start(roots, shell.Mounts, home)
	shell.GitHeld = true
	shell.Git = gitHeldText
	return g
}

// gitHeldText says what the guard holds, and what it does not.
const gitHeldText = "when the session ends, every folder a git run in the writable roots would reach is walked " +
	"(symlinked folders followed, no budget) and the code-running git config entries and hooks planted in it are moved " +
	"to a dsh-fs-quarantine-* folder of their git directory: planted means their file, or a folder on their " +
	"git directory's path that the mount layer did not pin, changed status (ctime) during the session; a folder the guard " +
	"cannot read is read with its owner's rights restored or moved aside, never taken as empty; " +
	"not held while the session runs: a git run by the person in the roots during the session may meet planted code " +
	"in a git directory the mount layer did not bind read-only"

// gitGuardReport is exec's end report of the guard, one JSON line on its
// stderr (its stdout is CMD's).
type gitGuardReport struct {
	Op       string          `json:"op"`
	GitGuard gitguard.Report `json:"git_guard"`
}

// endGitGuard neutralizes what the session planted and reports it, when
// there is anything to say: a repository acted on, one the guard could
// not act on, a folder it could not read (moved aside) or whose rights
// it restored to read it.
func (s *supervisor) endGitGuard() {
	if s.indexesSaved != nil {
		// The save runs on while the guard checks: both only read the
		// indexes (treeindex.Folder.Each changes nothing). Exec does
		// not end before it, which would leave its temporary file.
		defer func() { <-s.indexesSaved }()
	}
	if s.git == nil {
		return
	}
	rep := s.git.Check()
	s.gitReport = &rep
	if rep.Empty() {
		return
	}
	enc := json.NewEncoder(s.log())
	enc.SetEscapeHTML(false)
	enc.Encode(gitGuardReport{Op: "exec", GitGuard: rep})
}

// saveIndexes saves the roots' tree indexes the mount plan read, once
// CMD has started: nothing of the session needs them saved, so the save
// no longer delays CMD. endGitGuard waits for it, once the
// guard is done.
func (s *supervisor) saveIndexes() {
	if s.rec == nil || s.rec.Shell.Mounts == nil || len(s.rec.Shell.Mounts.Indexes) == 0 {
		return
	}
	m := s.rec.Shell.Mounts
	done := make(chan struct{})
	s.indexesSaved = done
	go func() {
		defer close(done)
		m.SaveIndexes()
	}()
}
