//go:build unix

package race

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The budgets bound the concurrency tests: past it, no new process is
// started, what ran is still checked, and the test is skipped as too slow
// for this machine (a hung process fails through its hang guard, which
// is harness.Timeout for each process running at once: each shares the
// machine with the others). A race-instrumented dsh-fs costs about 0.2
// CPU seconds, so 200 edits need some 20 s of a 2-core machine.
const (
	concurrentBudget = 120 * time.Second
	mixedBudget      = 60 * time.Second
)

// TestConcurrentEditsLoseNothing runs 200 edits as 200 dsh-fs processes,
// 8 at a time, each changing its own line of one shared file: the lock
// serializes them, so every edit succeeds and every change survives.
func TestConcurrentEditsLoseNothing(t *testing.T) {
	bin := harness.Bin(t)
	ws := t.TempDir()
	env := harness.Env(t, ws)
	const lines, workers = 200, 8
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "line-%03d = 0\n", i)
	}
	shared := filepath.Join(ws, "shared.txt")
	if err := os.WriteFile(shared, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	deadline := began.Add(concurrentBudget)
	var done [lines]atomic.Bool // the edit of line i exited 0
	var ran atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * lines / workers; i < (w+1)*lines/workers; i++ {
				if time.Now().After(deadline) {
					return
				}
				ran.Add(1)
				c := harness.Cmd(bin, env, ws, "edit", "shared.txt",
					"--old", fmt.Sprintf("line-%03d = 0", i), "--new", fmt.Sprintf("line-%03d = 1", i))
				code, res, out, errs := harness.RunWithin(t, c, nil, workers*harness.Timeout)
				if code != 0 || !res.OK || res.Replacements != 1 {
					t.Errorf("edit of line %d: exit %d\nstdout: %s\nstderr: %s", i, code, out, errs)
					continue
				}
				done[i].Store(true)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)

	got, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range lines {
		v := 0
		if done[i].Load() {
			v = 1
		}
		fmt.Fprintf(&want, "line-%03d = %d\n", i, v)
	}
	if string(got) != want.String() {
		lost := 0
		for i, l := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
			if i < lines && done[i].Load() && strings.HasSuffix(l, "= 0") {
				lost++
			}
		}
		t.Errorf("%d of %d successful edits were lost; the file is:\n%s", lost, ran.Load(), got)
	}
	if names := harness.DirNames(t, ws); len(names) != 1 {
		t.Errorf("the folder holds %q, want only shared.txt", names)
	}
	t.Logf("%d edit processes in %v", ran.Load(), took.Round(time.Millisecond))
	if n := ran.Load(); n < lines {
		t.Skipf("out of time: only %d of %d edits started within %v (the %d that ran lost nothing)", n, lines, concurrentBudget, n)
	}
}

// TestConcurrentWritesAndEdits mixes whole-file writes with edits: writer
// processes read the file, append a line and write it back with
// --if-match, retrying on FS_STALE; editor processes change distinct
// lines meanwhile. Neither kind of update may be lost: a write never
// clobbers an edit it did not see, and an edit never reverts an append.
func TestConcurrentWritesAndEdits(t *testing.T) {
	bin := harness.Bin(t)
	ws := t.TempDir()
	env := harness.Env(t, ws)
	// Editors pause between edits, so that writers (whose read-to-lock
	// window is a whole process start) also win while edits go on; a
	// writer backs off after FS_STALE rather than spin processes.
	const editLines, editors = 16, 2
	const writers, appends = 3, 3
	const editPause = 100 * time.Millisecond
	const backoff = 300 * time.Millisecond
	var b strings.Builder
	for i := range editLines {
		fmt.Fprintf(&b, "edit-%03d = 0\n", i)
	}
	shared := filepath.Join(ws, "shared.txt")
	if err := os.WriteFile(shared, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)

	began := time.Now()
	deadline := began.Add(mixedBudget)
	var edited [editLines]atomic.Bool
	var appended [writers][appends]atomic.Bool
	var stale, duringEdits atomic.Int32
	var editsRunning atomic.Int32
	editsRunning.Store(editors)
	var wg sync.WaitGroup
	for e := range editors {
		rng := rand.New(rand.NewSource(seed + int64(e)))
		wg.Go(func() {
			defer editsRunning.Add(-1)
			for i := e * editLines / editors; i < (e+1)*editLines/editors; i++ {
				if time.Now().After(deadline) {
					return
				}
				time.Sleep(time.Duration(rng.Int63n(int64(2 * editPause))))
				c := harness.Cmd(bin, env, ws, "edit", "shared.txt",
					"--old", fmt.Sprintf("edit-%03d = 0", i), "--new", fmt.Sprintf("edit-%03d = 1", i))
				code, res, out, errs := harness.RunWithin(t, c, nil, (editors+writers)*harness.Timeout)
				if code != 0 || !res.OK || res.Replacements != 1 {
					t.Errorf("edit of line %d: exit %d\nstdout: %s\nstderr: %s", i, code, out, errs)
					continue
				}
				edited[i].Store(true)
			}
		})
	}
	for w := range writers {
		rng := rand.New(rand.NewSource(seed + int64(editors+w)))
		wg.Go(func() {
			for j := range appends {
				line := fmt.Sprintf("append-%d-%d\n", w, j)
				for {
					if time.Now().After(deadline) {
						return
					}
					cur, err := os.ReadFile(shared)
					if err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					next := append(bytes.Clone(cur), line...)
					c := harness.Cmd(bin, env, ws, "write", "shared.txt", "--from", "-", "--if-match", harness.SHA256Hex(cur))
					code, res, out, errs := harness.RunWithin(t, c, bytes.NewReader(next), (editors+writers)*harness.Timeout)
					if code == 0 && res.OK {
						if res.SHA256 != harness.SHA256Hex(next) {
							t.Errorf("writer %d: wrote sha256 %s, want %s", w, res.SHA256, harness.SHA256Hex(next))
						}
						appended[w][j].Store(true)
						if editsRunning.Load() > 0 {
							duringEdits.Add(1)
						}
						break
					}
					if code == 1 && res.Error.Code == "FS_STALE" {
						stale.Add(1)
						time.Sleep(time.Duration(rng.Int63n(int64(backoff))))
						continue
					}
					t.Errorf("writer %d: write exit %d\nstdout: %s\nstderr: %s", w, code, out, errs)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)

	got, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
		seen[l]++
	}
	incomplete := 0
	for i := range editLines {
		if !edited[i].Load() {
			incomplete++
			continue
		}
		if l := fmt.Sprintf("edit-%03d = 1", i); seen[l] != 1 {
			t.Errorf("%q occurs %d times, want once (edit lost or reverted)", l, seen[l])
		}
	}
	nAppends := 0
	for w := range writers {
		for j := range appends {
			l := fmt.Sprintf("append-%d-%d", w, j)
			if !appended[w][j].Load() {
				incomplete++
				if seen[l] != 0 {
					t.Errorf("%q is in the file, but its write did not succeed", l)
				}
				continue
			}
			nAppends++
			if seen[l] != 1 {
				t.Errorf("%q occurs %d times, want once (append lost)", l, seen[l])
			}
		}
	}
	if want := editLines + nAppends; len(seen) != want {
		t.Errorf("the file has %d distinct lines, want %d:\n%s", len(seen), want, got)
	}
	if names := harness.DirNames(t, ws); len(names) != 1 {
		t.Errorf("the folder holds %q, want only shared.txt", names)
	}
	t.Logf("%v: %d appends (%d while edits ran), %d writes retried on FS_STALE", took.Round(time.Millisecond), nAppends, duringEdits.Load(), stale.Load())
	if incomplete > 0 {
		t.Skipf("out of time: %d updates not done within %v (the rest lost nothing)", incomplete, mixedBudget)
	}
}
