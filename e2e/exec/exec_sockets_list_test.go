//go:build unix

package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 37, "nothing one session does changes the next": below Landlock
// ABI 9 the sockets to hide are the kernel's own list of bound unix
// sockets, not a walk with a budget that a session can exhaust or a
// place it does not look.

// TestExecSocketsAfterFullTmp: a session leaves 2,100 files in /tmp; a
// later session still cannot reach a server outside it whose socket lies
// under /run or in the home folder, and its policy names no folder left
// unsearched.
func TestExecSocketsAfterFullTmp(t *testing.T) {
	forEachUser(t, func(t *testing.T, s *socketSession) {
		fill := socketPlace(t, "/tmp")
		s.ownBy(fill)
		out := s.run(t, nil, fmt.Sprintf("i=0; while [ $i -lt 2100 ]; do : > %s/f$i; i=$((i+1)); done; echo filled", fill))
		if !strings.Contains(out, "filled") {
			t.Fatalf("the first session did not fill /tmp:\n%s", out)
		}
		if n, _ := os.ReadDir(fill); len(n) < 2100 {
			t.Fatalf("the first session left %d files in %s", len(n), fill)
		}
		run := filepath.Join(socketPlace(t, "/run"), "bus")
		home := filepath.Join(s.home, ".dsh-fs-agent.sock")
		for _, p := range []string{run, home} {
			serveUnix(t, p)
		}
		t.Cleanup(func() { os.Remove(home) })
		out = s.run(t, nil, fmt.Sprintf("unix-dial %s; unix-dial %s; true", run, home))
		wantReached(t, out, map[string]bool{run: false, home: false})
		if s.agent {
			return // policy reads the record as root only (see TestExecSocketsOutside)
		}
		relative := relativeSocketBound()
		policy := s.run(t, nil, "dsh-fs policy --verbose")
		wantSocketsHeld(t, "policy", policy, relative || relativeSocketBound())
		if strings.Contains(policy, "walk budget") {
			t.Errorf("policy, want nothing left unsearched:\n%s", policy)
		}
	})
}

// TestExecSocketsTmuxVarTmp: a tmux server started before the session
// with a socket of its own under /var/tmp, where no walk looked, must not
// run the session's command.
func TestExecSocketsTmuxVarTmp(t *testing.T) {
	if _, err := os.Stat("/usr/bin/tmux"); err != nil {
		t.Skip("no tmux here")
	}
	forEachUser(t, func(t *testing.T, s *socketSession) {
		dir := socketPlace(t, "/var/tmp")
		s.ownBy(dir)
		os.Chmod(dir, 0o700)
		sock := filepath.Join(dir, "x")
		term := []string{"TERM=xterm"}
		if out, err := s.command(t, term, "tmux", "-S", sock, "new-session", "-d", "sleep 600").CombinedOutput(); err != nil {
			t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		t.Cleanup(func() { s.command(t, term, "tmux", "-S", sock, "kill-server").Run() })
		marker := filepath.Join(socketPlace(t, "/run"), "marker")
		os.Chmod(filepath.Dir(marker), 0o777)
		out := s.run(t, nil, fmt.Sprintf("TERM=xterm tmux -S %s run-shell 'touch %s'; echo \"tmux=$?\"", sock, marker))
		if strings.Contains(out, "tmux=0") {
			t.Errorf("the shell's tmux client reached the server under /var/tmp:\n%s", out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("the tmux server outside ran the shell's command: %s exists\n%s", marker, out)
		}
	})
}
