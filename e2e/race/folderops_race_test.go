//go:build unix

package race

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// folderOpsRaceCommands are the calls of TestFolderOpsSwapRace: rm, move
// and mkdir through d (exchanged with a link to ../outside/dir) and ln
// (retargeted there), and a write that puts d/f.txt back. A naive rm
// would delete outside/dir/f.txt or new.txt, a naive move rename one
// or carry it into the workspace, or carry inside.txt out, a naive mkdir
// make outside/dir/made.
func folderOpsRaceCommands() [][]string {
	return [][]string{
		{"write", "d/f.txt", "--overwrite", "--mkdir", "--content", "put back\n"},
		{"rm", "d/f.txt"},
		{"rm", "ln/new.txt"},
		{"move", "d/f.txt", "d/g.txt"},
		{"move", "d/g.txt", "d/f.txt"},
		{"move", "ln/new.txt", "stolen.txt"},
		{"move", "inside.txt", "d/moved.txt"},
		{"move", "d/moved.txt", "inside.txt"},
		{"mkdir", "d/made"},
		{"rm", "d/made"},
		{"mkdir", "--parents", "ln/made/deeper"},
	}
}

// TestFolderOpsSwapRace (issue 40) races dsh-fs rm, move and mkdir
// against the attacker of TestSymlinkSwapRace, processes against a
// process: whatever the attacker swaps between the fence's decision and
// the act, not one byte outside the workspace may change. Its control,
// a naive mkdir (the fence's check on the name, then os.Mkdir of the path
// as given), runs against the same attacker and must be caught making a
// folder outside, or the harness would prove nothing.
func TestFolderOpsSwapRace(t *testing.T) {
	dur := 2 * time.Second
	if testing.Short() {
		dur = 800 * time.Millisecond
	}
	if s := os.Getenv(envRaceSeconds); s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envRaceSeconds, s, err)
		}
		dur = time.Duration(secs * float64(time.Second))
	}
	runner := dshfsRunner(t)
	for _, enforce := range []string{"off", "auto"} {
		t.Run("enforce="+enforce, func(t *testing.T) {
			l := newRaceLayout(t)
			before := snapshotTree(t, l.outside)
			system := filepath.Join(l.dir, "etc")
			harness.WriteTree(t, system, map[string]string{"config.yaml": "enforce: " + enforce + "\n"})
			env := append(raceEnv(l, enforce, runner.env), "DSH_FS_TEST_SYSTEM_DIR="+system, "DSH_FS_TEST_HOME="+l.home)
			cmds := folderOpsRaceCommands()
			attacker := startRaceAttacker(t, l, dur)
			res := &raceResult{runner: "dsh-fs rm/move/mkdir", enforce: enforce, hist: map[string]int{}, perCmd: map[string]map[string]int{}}
			var mu sync.Mutex
			start := time.Now()
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() {
					for n := w; time.Since(start) < dur; n++ {
						args := cmds[n%len(cmds)]
						key, cls, bad := runRaceCall(runner, env, args)
						mu.Lock()
						res.calls++
						res.hist[key]++
						op := strings.Join(args, " ")
						if res.perCmd[op] == nil {
							res.perCmd[op] = map[string]int{}
						}
						res.perCmd[op][cls]++
						if bad != "" && len(res.unexpected) < 5 {
							res.unexpected = append(res.unexpected, bad)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			res.elapsed = time.Since(start)
			res.attacker = attacker.stop(t)
			res.escapes = diffTree(before, snapshotTree(t, l.outside))
			res.wsLitter = findLitter(t, l.ws)
			res.log(t)
			res.requireExercised(t)
			res.requireNoEscape(t)
		})
	}

	t.Run("naive control", func(t *testing.T) {
		l := newRaceLayout(t)
		before := snapshotTree(t, l.outside)
		fence := sandbox.NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: l.ws, WritableRoots: []string{l.ws}})
		attacker := startRaceAttacker(t, l, 10*time.Second)
		calls, checked := 0, 0
		var escapes []string
		for start := time.Now(); time.Since(start) < 10*time.Second && len(escapes) == 0; calls++ {
			// Checked on the name, made by the name: between the two, d
			// may have been exchanged for the link to ../outside/dir.
			tgt, err := fence.ResolveName("d/made")
			if err == nil {
				err = fence.CheckWrite("mkdir", &tgt)
			}
			if err != nil {
				checked++
				continue
			}
			if os.Mkdir(filepath.Join(l.ws, "d/made"), 0o755) == nil {
				os.Remove(filepath.Join(l.ws, "d/made"))
			}
			if calls%64 == 0 {
				escapes = diffTree(before, snapshotTree(t, l.outside))
			}
		}
		t.Logf("naive mkdir: %d calls, %d denied at the check; %s", calls, checked, attacker.stop(t))
		escapes = diffTree(before, snapshotTree(t, l.outside))
		if len(escapes) == 0 {
			t.Fatalf("the naive mkdir changed nothing outside in %d calls: the harness proves nothing", calls)
		}
		t.Logf("CONTROL: the naive check-then-mkdir was caught: %s", strings.Join(escapes, "; "))
	})
}
