//go:build unix

package race

// Issue 22: a RENAME_EXCHANGE race against move. exchange-loop swaps the
// harmless folder d and the repository .git while moves out of d/hooks
// and into d/hooks run; a move decided on the names would carry a hook
// out of the repository, or plant one in it. Since issue 23 the rest of
// a git directory is writable: the moves aim at its hooks, one of the
// parts that stay protected.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// moveRaceRepoFile is the content of every hook of the repository the
// moves name through d: an out-N holding it was carried out of .git.
const moveRaceRepoFile = "git object\n"

// moveRaceLayout makes ws with .git (a repository whose hooks/s-N have
// the same names as d's) and d, plus in-N at the top for the moves into
// d/hooks.
func moveRaceLayout(t *testing.T, calls int) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		".git/HEAD":             "ref: refs/heads/main\n",
		".git/config":           "[core]\n\trepositoryformatversion = 0\n",
		".git/objects/.keep":    "",
		".git/refs/heads/.keep": "",
	}
	for n := 1; n <= calls; n++ {
		files[fmt.Sprintf(".git/hooks/s-%d", n)] = moveRaceRepoFile
		files[fmt.Sprintf("d/hooks/s-%d", n)] = "d\n"
		files[fmt.Sprintf("in-%d", n)] = "in\n"
	}
	harness.WriteTree(t, ws, files)
	return ws
}

// moveRaceRepo is whichever of .git and d holds the repository now.
func moveRaceRepo(ws string) string {
	if _, err := os.Stat(filepath.Join(ws, ".git", "HEAD")); err == nil {
		return filepath.Join(ws, ".git")
	}
	return filepath.Join(ws, "d")
}

// moveRaceEscapes counts the moves that reached the repository: a
// repository entry carried out to out-N, an in-N landed in it.
func moveRaceEscapes(t *testing.T, ws string, before map[string]string) (escapes int, example string) {
	t.Helper()
	out, in := 0, 0
	for _, name := range harness.DirNames(t, ws) {
		if strings.HasPrefix(name, "out-") && harness.ReadFile(t, filepath.Join(ws, name)) == moveRaceRepoFile {
			out++
			example = name + " was carried out of .git"
		}
	}
	repo := moveRaceRepo(ws)
	for _, name := range harness.DirNames(t, filepath.Join(repo, "hooks")) {
		if strings.HasPrefix(name, "in-") {
			in++
			example = name + " landed in .git/hooks"
		}
	}
	escapes = out + in
	if escapes > 0 {
		example = fmt.Sprintf("%d carried out of .git, %d landed in it (e.g. %s)", out, in, example)
	}
	if after := snapshotTree(t, filepath.Join(repo, "hooks")); !maps.Equal(before, after) && escapes == 0 {
		escapes++
		example = "the repository's hooks changed"
	}
	return escapes, example
}

// mcpErrorCode is the first FS_ code in a tool's error text.
func mcpErrorCode(text string) string {
	if m := regexp.MustCompile(`FS_[A-Z_]+`).FindString(text); m != "" {
		return m
	}
	return text
}

// naiveMove is the control: it checks the names (nothing named .git) and
// then renames them, as a move decided on names would.
func naiveMove(ws, src, dst string) error {
	for _, p := range []string{src, dst} {
		if strings.HasPrefix(filepath.Clean(p), ".git") {
			return fmt.Errorf("%s: protected", p)
		}
	}
	return os.Rename(filepath.Join(ws, src), filepath.Join(ws, dst))
}

// TestMoveExchangeRace runs move_file over MCP and the naive move under
// the same attacker (the CLI has no move command). The real moves must
// leave the repository's hooks as they were, whatever the repository's
// name when the race is over; the naive move must escape, or the attack
// proves nothing.
func TestMoveExchangeRace(t *testing.T) {
	calls, most := 1000, 10*time.Second
	if testing.Short() {
		calls = 200
	}
	// A mover returns "" when the move succeeded, else why it was refused.
	type mover func(t *testing.T, ws, src, dst string) (refused string)
	cases := []struct {
		name  string
		start func(t *testing.T, ws string) mover
		naive bool
	}{
		{"mcp", func(t *testing.T, ws string) mover {
			s := harness.MCPStart(t, ws, "--tmp=false", ws)
			return func(t *testing.T, ws, src, dst string) string {
				res := harness.MCPCall(t, s, "move_file", map[string]any{"source": src, "destination": dst})
				if !res.IsError {
					return ""
				}
				return mcpErrorCode(harness.MCPText(res))
			}
		}, false},
		{"naive", func(t *testing.T, ws string) mover {
			return func(t *testing.T, ws, src, dst string) string {
				if err := naiveMove(ws, src, dst); err != nil {
					return "refused"
				}
				return ""
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := moveRaceLayout(t, calls)
			before := snapshotTree(t, filepath.Join(ws, ".git", "hooks"))
			move := c.start(t, ws)
			stop := startExchangeLoop(t, ws, "d", ".git", most+10*time.Second)
			start, deadline := time.Now(), time.Now().Add(most)
			hist, n := map[string]int{}, 0
			for n = 1; n <= calls && time.Now().Before(deadline); n++ {
				hist[move(t, ws, fmt.Sprintf("d/hooks/s-%d", n), fmt.Sprintf("out-%d", n))]++
				hist[move(t, ws, fmt.Sprintf("in-%d", n), fmt.Sprintf("d/hooks/in-%d", n))]++
			}
			ok := hist[""]
			delete(hist, "")
			counts := stop()
			escapes, example := moveRaceEscapes(t, ws, before)
			t.Logf("%d iterations (%d moves, %d succeeded, refused by code: %v) in %v; %s; %d escapes: %s",
				n-1, 2*(n-1), ok, hist, time.Since(start).Round(time.Millisecond), counts, escapes, example)
			switch {
			case c.naive && escapes == 0:
				t.Errorf("the naive move never escaped: the attack is too weak")
			case !c.naive && escapes > 0:
				t.Errorf("%d moves reached the repository, e.g. %s", escapes, example)
			case !c.naive && ok == 0:
				t.Errorf("no move succeeded: the race proves nothing")
			}
		})
	}
}
