//go:build unix

package race

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestPatchNoSpace fills a 1 MiB tmpfs so that a patch's third file
// cannot be staged: the patch fails with FS_NO_SPACE, the files already
// staged are dropped with the rest, every file is byte-identical, the
// folders made for the new file are removed again and the folder holds no
// temp file.
func TestPatchNoSpace(t *testing.T) {
	mnt := smallTmpfs(t, "1m")
	bin := harness.Bin(t)
	ws := filepath.Join(mnt, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	small := []byte("small: one line\n")
	big := append([]byte("MARK: the one line the patch grows\n"), bytes.Repeat([]byte("OLD old content, kept whole\n"), (100<<10)/28)...)
	files := map[string][]byte{"a.txt": small, "big.txt": big}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a.txt is staged first and fits; big.txt, rewritten whole beside
	// the original, does not.
	patch := "*** Begin Patch\n*** Add File: n/sub/new.txt\n+new\n*** Update File: a.txt\n@@\n-small: one line\n+small: changed\n" +
		"*** Update File: big.txt\n@@\n-MARK: the one line the patch grows\n+" + strings.Repeat("grown ", 10<<10) + "\n*** End Patch\n"
	fillTmpfs(t, mnt, 8<<10)
	code, res, out, errs := harness.Run(t, harness.Cmd(bin, harness.Env(t, ws), ws, "patch", "--from", "-"), strings.NewReader(patch))
	if code != 1 || res.OK || res.Error.Code != "FS_NO_SPACE" {
		t.Errorf("patch on a full tmpfs: exit %d, want 1 with FS_NO_SPACE\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed: %d bytes, want the old %d", name, len(got), len(want))
		}
	}
	if names := harness.DirNames(t, ws); strings.Join(names, ",") != "a.txt,big.txt" {
		t.Errorf("ls -A shows %q, want a.txt and big.txt only (no temp file, no folder made for n/sub/new.txt)", names)
	}
}

// patchRaceCommands are the calls a patch race cycles through: deletions
// and creations through d (swapped with a link to ../outside/dir) and
// ln, d2 (retargeted there), and a write that puts d/f.txt back. A
// naive remover would delete outside/dir/f.txt or new.txt; a naive
// creator would add outside/dir/added.txt.
func patchRaceCommands(dir string) [][]string {
	patches := map[string]string{
		"del-d-f":      "*** Delete File: d/f.txt",
		"del-d2-f":     "*** Delete File: d2/f.txt",
		"add-ln":       "*** Add File: ln/added.txt\n+added by a patch",
		"del-ln-added": "*** Delete File: ln/added.txt",
		"del-ln-new":   "*** Delete File: ln/new.txt",
	}
	var names []string
	for name, body := range patches {
		p := filepath.Join(dir, name+".patch")
		if err := os.WriteFile(p, []byte("*** Begin Patch\n"+body+"\n*** End Patch\n"), 0o644); err != nil {
			panic(err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	cmds := [][]string{{"write", "d/f.txt", "--overwrite", "--mkdir", "--content", "put back\n"}}
	for _, name := range names {
		cmds = append(cmds, []string{"patch", "--from", filepath.Join(dir, name+".patch")})
	}
	return cmds
}

// TestPatchSwapRace races patch's removals and creations against the
// attacker of TestSymlinkSwapRace, processes against a process: not one
// byte outside the workspace may change. Its control, a naive remover
// (the fence's check on the name, then os.Remove of the path as given),
// is run against the same attacker and must be caught removing a file
// outside, once, or the harness would prove nothing.
func TestPatchSwapRace(t *testing.T) {
	dur := 2 * time.Second
	if testing.Short() {
		dur = 800 * time.Millisecond
	}
	runner := dshfsRunner(t)
	for _, enforce := range []string{"off", "auto"} {
		t.Run("enforce="+enforce, func(t *testing.T) {
			l := newRaceLayout(t)
			before := snapshotTree(t, l.outside)
			system := filepath.Join(l.dir, "etc")
			harness.WriteTree(t, system, map[string]string{"config.yaml": "enforce: " + enforce + "\n"})
			env := append(raceEnv(l, enforce, runner.env), "DSH_FS_TEST_SYSTEM_DIR="+system, "DSH_FS_TEST_HOME="+l.home)
			cmds := patchRaceCommands(l.dir)
			attacker := startRaceAttacker(t, l, dur)
			res := &raceResult{runner: "dsh-fs patch", enforce: enforce, hist: map[string]int{}, perCmd: map[string]map[string]int{}}
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
						op := strings.Join(args[:2], " ")
						if args[0] == "patch" {
							op = "patch " + filepath.Base(args[2])
						}
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
			// Checked on the name, removed by the name: between the two,
			// ln may have been retargeted to ../outside/dir.
			tgt, err := fence.ResolveName("ln/new.txt")
			if err == nil {
				err = fence.CheckWrite("patch", &tgt)
			}
			if err != nil {
				checked++
				continue
			}
			os.Remove(filepath.Join(l.ws, "ln/new.txt"))
			if calls%64 == 0 {
				escapes = diffTree(before, snapshotTree(t, l.outside))
			}
		}
		t.Logf("naive remover: %d calls, %d denied at the check; %s", calls, checked, attacker.stop(t))
		escapes = diffTree(before, snapshotTree(t, l.outside))
		if len(escapes) == 0 {
			t.Fatalf("the naive remover changed nothing outside in %d calls: the harness proves nothing", calls)
		}
		t.Logf("CONTROL: the naive check-then-remove was caught: %s", strings.Join(escapes, "; "))
	})
}
