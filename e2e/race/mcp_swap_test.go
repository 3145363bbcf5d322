//go:build unix

package race

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMcpSwapRace is TestSymlinkSwapRace against one long-lived server:
// the attacker process swaps folders and files for symlinks to outside
// while the server writes, edits, makes folders and moves, call after
// call, each through a fence of its own. Nothing outside may change.
// With enforce=off the confined handles alone hold; with auto, Landlock
// (applied once in the server) is beneath them.
func TestMcpSwapRace(t *testing.T) {
	dur := 2 * time.Second
	if testing.Short() {
		dur = 700 * time.Millisecond
	}
	for _, enforce := range []string{"off", "auto"} {
		t.Run("enforce="+enforce, func(t *testing.T) {
			l := newRaceLayout(t)
			before := snapshotTree(t, l.outside)
			s := harness.MCPStart(t, l.ws, "--enforce", enforce, l.ws)
			a := startRaceAttacker(t, l, dur)
			calls := []struct {
				tool string
				args func(n int) map[string]any
			}{
				{"write_file", func(n int) map[string]any {
					return map[string]any{"path": "d/f.txt", "content": fmt.Sprintf("mcp #%d d/f.txt\n", n)}
				}},
				{"write_file", func(n int) map[string]any {
					return map[string]any{"path": "ln/new.txt", "content": fmt.Sprintf("mcp #%d ln/new.txt\n", n)}
				}},
				{"edit_file", func(n int) map[string]any {
					return map[string]any{"path": "file.txt", "edits": []map[string]string{{"oldText": "A", "newText": "B"}}}
				}},
				{"write_file", func(n int) map[string]any {
					return map[string]any{"path": "file.txt", "content": fmt.Sprintf("A mcp #%d file.txt\n", n)}
				}},
				{"write_file", func(n int) map[string]any {
					return map[string]any{"path": "d2/f.txt", "content": fmt.Sprintf("mcp #%d d2/f.txt\n", n)}
				}},
				{"write_file", func(n int) map[string]any {
					return map[string]any{"path": "lnf", "content": fmt.Sprintf("mcp #%d lnf\n", n)}
				}},
				{"create_directory", func(n int) map[string]any { return map[string]any{"path": fmt.Sprintf("ln/made%d/x", n)} }},
				{"move_file", func(n int) map[string]any {
					return map[string]any{"source": "inside.txt", "destination": fmt.Sprintf("d/moved%d.txt", n)}
				}},
				{"move_file", func(n int) map[string]any {
					return map[string]any{"source": fmt.Sprintf("d/moved%d.txt", n-1), "destination": "inside.txt"}
				}},
			}
			hist := map[string]int{}
			n := 0
			for deadline := time.Now().Add(dur); time.Now().Before(deadline); n++ {
				c := calls[n%len(calls)]
				res := harness.MCPCall(t, s, c.tool, c.args(n))
				switch text := harness.MCPText(res); {
				case !res.IsError:
					hist[c.tool+" ok"]++
				case strings.Contains(text, "[sandbox: file access denied"):
					hist[c.tool+" denied"]++
				default:
					hist[c.tool+" other"]++
				}
			}
			t.Logf("attacker: %s", a.stop(t))
			t.Logf("%d calls: %v", n, hist)
			if changed := diffTree(before, snapshotTree(t, l.outside)); len(changed) > 0 {
				t.Fatalf("outside changed: %v", changed)
			}
			if hist["write_file ok"] == 0 {
				t.Errorf("no write passed: the race exercised nothing")
			}
		})
	}
}
