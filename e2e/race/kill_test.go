//go:build unix

package race

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestWriteKilledIsAtomic kills a streaming write with SIGKILL at random
// moments (while it starts, while it copies, around the commit, after it)
// and checks that the file is always exactly the old or the new content
// and that the folder holds nothing else: O_TMPFILE leaves no temp file.
// The portable build (macOS, -tags dshportable) has no O_TMPFILE: its
// temp file is the staging name from the start, so a kill while it copies
// leaves that name with part of the content, which the next write of the
// target removes all the same.
func TestWriteKilledIsAtomic(t *testing.T) {
	bin := harness.Bin(t)
	ws := t.TempDir()
	env := harness.Env(t, ws)
	target := filepath.Join(ws, "big.bin")

	oldData := bytes.Repeat([]byte("AAAAAAA old pattern A\n"), (8<<20)/22)
	newData := bytes.Repeat([]byte("BBBBBBBBB new pattern B\n"), (8<<20)/24)
	oldSum, newSum := harness.SHA256Hex(oldData), harness.SHA256Hex(newData)

	const chunk = 256 << 10
	const pause = time.Millisecond

	// run starts a write of newData over a fresh old file, feeding stdin in
	// chunks, and kills it as kill says: once the input reached atByte
	// (the child has then read all but at most a pipe buffer of it), or
	// delay after the input ended. A nil kill lets it finish. It returns
	// the exit error and the time from the end of the input to the exit.
	type killAt struct {
		afterInput bool
		atByte     int
		delay      time.Duration
	}
	run := func(kill *killAt) (time.Duration, error) {
		t.Helper()
		if err := os.WriteFile(target, oldData, 0o644); err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := harness.Cmd(bin, env, ws, "write", "big.bin", "--overwrite", "--from", "-")
		c.Stdin = r // an *os.File: the child reads the pipe itself
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		reached := make(chan struct{})
		inputDone := make(chan time.Time, 1)
		go func() {
			defer w.Close()
			signalled := false
			for off := 0; off < len(newData); off += chunk {
				end := min(off+chunk, len(newData))
				if kill != nil && !kill.afterInput && !signalled && end >= kill.atByte {
					close(reached)
					signalled = true
				}
				if _, err := w.Write(newData[off:end]); err != nil {
					inputDone <- time.Time{} // the child died: EPIPE
					return
				}
				time.Sleep(pause)
			}
			w.Close()
			inputDone <- time.Now()
		}()
		exited := make(chan error, 1)
		go func() { exited <- c.Wait() }()

		var closedAt time.Time
		var werr error
		switch {
		case kill == nil:
			closedAt = <-inputDone
			werr = <-exited
		case !kill.afterInput:
			select {
			case werr = <-exited:
			case <-reached:
				time.Sleep(kill.delay)
				c.Process.Signal(syscall.SIGKILL)
				werr = <-exited
			}
			closedAt = <-inputDone
		default:
			closedAt = <-inputDone
			if !closedAt.IsZero() {
				select {
				case werr = <-exited:
				case <-time.After(time.Until(closedAt.Add(kill.delay))):
					c.Process.Signal(syscall.SIGKILL)
					werr = <-exited
				}
			} else {
				werr = <-exited
			}
		}
		if closedAt.IsZero() {
			return 0, werr
		}
		return time.Since(closedAt), werr
	}

	// staging is the one hidden name a replacement of big.bin may leave
	// when killed between linking its content in and renaming it over the
	// target; the next write of big.bin removes it.
	sum := sha256.Sum256([]byte("big.bin"))
	staging := fmt.Sprintf(".dsh-fs-%x.tmp", sum[:8])

	// check asserts old-or-new, and nothing else in the folder but the
	// staging file holding the complete new content; it returns which
	// content big.bin has and whether the staging file was there.
	check := func(iter int) (isNew bool, staged bool) {
		t.Helper()
		sum := harness.FileSHA256(t, target)
		if sum != oldSum && sum != newSum {
			fi, _ := os.Stat(target)
			t.Errorf("iteration %d: big.bin is neither the old nor the new content (size %d, sha256 %s)", iter, fi.Size(), sum)
		}
		for _, n := range harness.DirNames(t, ws) {
			switch n {
			case "big.bin":
			case staging:
				staged = true
				if got := harness.FileSHA256(t, filepath.Join(ws, n)); got != newSum && sandbox.Accelerated() {
					t.Errorf("iteration %d: the staging file %s holds %s, not the complete new content", iter, n, got)
				}
			default:
				t.Errorf("iteration %d: the folder holds %s beside big.bin", iter, n)
			}
		}
		return sum == newSum, staged
	}

	// Uninterrupted, the new content is reachable; and the time the
	// command needs after its input ends sets the window to kill in.
	tail, err := run(nil)
	if err != nil {
		t.Fatalf("an uninterrupted write failed: %v", err)
	}
	if isNew, staged := check(0); !isNew || staged {
		t.Fatalf("an uninterrupted write did not leave exactly the new content alone")
	}
	t.Logf("uninterrupted: %v after the input ended", tail)

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	const iterations = 20
	budget := 8 * time.Second
	began := time.Now()
	var nOld, nNew, nStaged, nExit0, done int
	for i := 1; i <= iterations; i++ {
		if time.Since(began) > budget {
			t.Logf("time budget spent: skipping iterations %d-%d", i, iterations)
			break
		}
		var k killAt
		switch i % 3 {
		case 0: // while it copies
			k.atByte = rng.Intn(len(newData))
			k.delay = time.Duration(rng.Int63n(int64(pause)))
		default: // around the commit: sync, link, rename, folder sync, exit
			k.afterInput = true
			k.delay = time.Duration(rng.Int63n(int64(tail + tail/2 + time.Millisecond)))
		}
		_, err := run(&k)
		var ee *exec.ExitError
		switch {
		case err == nil:
			nExit0++
		case errors.As(err, &ee) && ee.ExitCode() == -1:
			// killed
		default:
			t.Errorf("iteration %d: the write ended with %v, neither killed nor done", i, err)
		}
		isNew, staged := check(i)
		if t.Failed() {
			t.Logf("iteration %d: kill %+v: %v", i, k, err)
		}
		if err == nil && !isNew {
			t.Errorf("iteration %d: the write exited 0 but big.bin holds the old content", i)
		}
		if isNew {
			nNew++
		} else {
			nOld++
		}
		if staged {
			nStaged++
		}
		done++
	}
	t.Logf("%d kills: %d left the old content, %d the new (%d exited before the kill), %d the staging file", done, nOld, nNew, nExit0, nStaged)

	// Whatever the kills left, the next write leaves big.bin alone.
	if _, err := run(nil); err != nil {
		t.Fatalf("a write after the kills failed: %v", err)
	}
	if isNew, staged := check(iterations + 1); !isNew || staged {
		t.Errorf("after the kills, a write did not leave exactly the new content alone (staging file left: %v)", staged)
	}
}

// TestWriteKilledAtRenameLeavesNoTemp stops a replacing write exactly at
// rename(2), after its new content was linked in under the staging name:
// the target keeps the old content, at most that one staging file is
// left, and the next write of the same file removes it. A creating write
// killed at its link leaves nothing but, at most, the complete new file.
func TestWriteKilledAtRenameLeavesNoTemp(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace to stop the write exactly at a system call")
	}
	bin := harness.Bin(t)
	ws := t.TempDir()
	env := harness.Env(t, ws)
	target := filepath.Join(ws, "f.txt")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	killAt := func(calls string, args ...string) int {
		c := harness.Cmd(strace, env, ws, append([]string{"-f", "-o", os.DevNull,
			"-e", "trace=" + calls, "-e", "inject=" + calls + ":signal=KILL", bin}, args...)...)
		code, _, _, _ := harness.Run(t, c, nil)
		return code
	}

	if code := killAt("rename,renameat,renameat2", "write", "f.txt", "--overwrite", "--content", "new\n"); code == 0 {
		t.Skipf("strace did not kill the write at rename (exit %d)", code)
	}
	if got, _ := os.ReadFile(target); string(got) != "old\n" {
		t.Fatalf("killed before rename, f.txt holds %q, want the old content", got)
	}
	if names := harness.DirNames(t, ws); len(names) > 2 {
		t.Fatalf("killed at rename, the folder holds %v: more than f.txt and one staging file", names)
	}
	code, _, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "write", "f.txt", "--overwrite", "--content", "newer\n"), nil)
	if code != 0 {
		t.Fatalf("write after the kill: exit %d: %s %s", code, out, errs)
	}
	if names := harness.DirNames(t, ws); len(names) != 1 || names[0] != "f.txt" {
		t.Errorf("the next write left %v, want only f.txt: the staging file of the killed write is still there", names)
	}

	// A creating write links its file in under its own name: killed at
	// the link, it leaves nothing, or the whole new file.
	killAt("link,linkat", "write", "new.txt", "--content", "created\n")
	for _, n := range harness.DirNames(t, ws) {
		switch n {
		case "f.txt":
		case "new.txt":
			if got, _ := os.ReadFile(filepath.Join(ws, n)); string(got) != "created\n" {
				t.Errorf("new.txt holds %q, want all of the new content", got)
			}
		default:
			t.Errorf("a creating write killed at its link left %s", n)
		}
	}
}

// TestWriteConcurrentCreateIsExists holds a creating write just before it
// links its new file in, creates the same name meanwhile, and lets it go
// on: the write fails with FS_EXISTS and leaves the other file as it is,
// where a rename would have silently replaced it.
func TestWriteConcurrentCreateIsExists(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace to hold the write at linkat(2)")
	}
	bin := harness.Bin(t)
	ws := t.TempDir()
	env := harness.Env(t, ws)
	// The temp file's fsync comes just before the link (the portable
	// build's rename without replacing, renameat2): once strace has
	// logged it, the write is held at that call for 3 s.
	trace := filepath.Join(t.TempDir(), "trace")
	c := harness.Cmd(strace, env, ws, "-f", "-o", trace,
		"-e", "trace=fsync,linkat,renameat2", "-e", "inject=linkat,renameat2:delay_enter=3000000",
		bin, "write", "new.txt", "--content", "mine\n")
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(harness.Timeout); ; time.Sleep(5 * time.Millisecond) {
		if log, _ := os.ReadFile(trace); bytes.Contains(log, []byte("fsync(")) {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatal("the write never reached its fsync")
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "new.txt"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1: %s", err, out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte(`"code":"FS_EXISTS"`)) {
		t.Fatalf("want FS_EXISTS: %s", out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "new.txt")); string(got) != "theirs\n" {
		t.Errorf("new.txt holds %q: the other process's file was replaced", got)
	}
	if names := harness.DirNames(t, ws); len(names) != 1 {
		t.Errorf("the folder holds %v, want only new.txt", names)
	}
}
