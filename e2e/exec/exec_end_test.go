//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecLeftBehindEndsBeforeGuard: CMD leaves behind a process that
// ignores the hang-up and the terminate signals and, in a loop, plants a
// pre-commit hook in a repository it made, putting it back each time it
// is gone. The session's end is reported to the supervisor before the
// session's init exits (child.Init ends the rest first), and the git
// guard runs from that report: were a process of the session still
// alive then, it would put the hook back after the guard moved it to
// quarantine, and git would run it. None is: the hook is quarantined
// and stays away, and nothing the session started writes after exec
// returned.
func TestExecLeftBehindEndsBeforeGuard(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws := harness.CanonicalTemp(t)
	env := append(execEnv(t, ws), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `git init -q new && h=new/.git/hooks/pre-commit && `+
		`( trap '' HUP TERM INT; i=0; while :; do printf '#!/bin/sh\nexit 0\n' > "$h" 2>/dev/null; i=$((i+1)); printf %d $i > beat; done ) >/dev/null 2>&1 & `+
		`while [ ! -s beat ]; do :; done; echo planted`)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("the session did not plant: exit %d\n%s\n%s", code, out, errs)
	}
	beat := func() string {
		b, _ := os.ReadFile(filepath.Join(ws, "beat"))
		return string(b)
	}
	first := beat()
	time.Sleep(300 * time.Millisecond)
	if last := beat(); last != first {
		t.Errorf("a process of the session still writes after exec returned: beat %s, then %s", first, last)
	}
	repo := filepath.Join(ws, "new")
	wantNeutralized(t, errs, filepath.Join(repo, ".git"), "hooks/pre-commit")
	wantAbsent(t, filepath.Join(repo, ".git/hooks/pre-commit"))
}
