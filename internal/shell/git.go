package shell

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/gitguard"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// The git guard of a session (docs/design.md §10): the supervisor records
// the code-running parts of the git directories in the writable roots
// before CMD starts, and neutralizes what the session planted once CMD
// has ended.

// startGitGuard records the git directories of roots for the session of
// s and says in shell what holds. danger-full-access has none: the
// harness asked for full access, and nothing fences the shell.
func startGitGuard(lookupEnv func(string) (string, bool), s *config.Settings, roots []sandbox.Root, shell *session.Shell) *gitguard.Guard {
	if s.Policy.Mode == sandbox.DangerFullAccess {
		shell.Git = "not held: danger-full-access mode"
		return nil
	}
	home, _ := lookupEnv("HOME")
	g := gitguard.Snapshot(roots, home)
	shell.GitHeld = true
	shell.Git = gitHeldText(g.Repos(), g.Partial)
	return g
}

// gitHeldText says what the guard holds, with n git directories recorded
// at the start and the folders it did not finish.
func gitHeldText(n int, partial []string) string {
	t := fmt.Sprintf("when the session ends, code-running git config entries and hooks planted in the writable roots are moved to a dsh-fs-quarantine-* folder of their git directory (%d git directories recorded at the start)", n)
	if len(partial) > 0 {
		t += "; not searched past the walk budget in " + strings.Join(partial, ", ")
	}
	return t
}

// gitGuardReport is exec's end report of the guard, one JSON line on its
// stderr (its stdout is CMD's).
type gitGuardReport struct {
	Op       string          `json:"op"`
	GitGuard gitguard.Report `json:"git_guard"`
}

// endGitGuard neutralizes what the session planted and reports it, when
// there is anything to say: a repository acted on, one the guard could
// not act on, or a folder it did not finish.
func (s *supervisor) endGitGuard() {
	if s.git == nil {
		return
	}
	rep := s.git.Check()
	if rep.Empty() {
		return
	}
	enc := json.NewEncoder(s.log())
	enc.SetEscapeHTML(false)
	enc.Encode(gitGuardReport{Op: "exec", GitGuard: rep})
}
