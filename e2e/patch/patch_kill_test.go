//go:build linux && amd64

package patch

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"golang.org/x/sys/unix"
)

// What a kill between two renames of `dsh-fs patch` leaves, and what the
// next call does about it (docs/design.md §5, patch, "A kill between two
// renames"), shown on the real binary killed with SIGKILL at the entry of
// each system call of its burst in turn: no hook in the release code, the
// process is stopped by ptrace just before the call would run.
//
// strace -f -e trace=%file of a patch shows that the staging before the
// burst names nothing (O_TMPFILE, fsync) and that the burst's changes of
// names are linkat (a creation, or a replacement linked in under its
// staging name), unlinkat (a leftover staging name removed first, a
// removal), renameat (the staging name over the target) and renameat2
// (RENAME_NOREPLACE, a move). Those are the calls counted. The file is
// amd64 only: it reads the call's number and arguments from amd64's
// registers.

// burstCalls are the system calls that change a folder's names: the
// burst's steps. The older rename, link and unlink are counted too, in
// case a libc or a Go release ever uses them.
var burstCalls = map[uint64]string{
	unix.SYS_LINKAT:    "linkat",
	unix.SYS_UNLINKAT:  "unlinkat",
	unix.SYS_RENAMEAT:  "renameat",
	unix.SYS_RENAMEAT2: "renameat2",
	unix.SYS_RENAME:    "rename",
	unix.SYS_LINK:      "link",
	unix.SYS_UNLINK:    "unlink",
}

// tracedRun is a process run under killAtCall: the calls of burstCalls
// it entered, as "name path…" (for linkat only the name it makes: its
// source is the unnamed file's /proc link), whether it was killed, and
// its output.
type tracedRun struct {
	Calls          []string
	Killed         bool
	Status         syscall.WaitStatus
	Stdout, Stderr string
}

// killAtCall runs bin with args in dir under ptrace (every thread, with
// PTRACE_O_TRACECLONE), and kills it with SIGKILL at the entry of the
// killAt-th call of burstCalls that any of its threads makes, before
// that call runs: the kernel skips a call whose tracee has a fatal
// signal pending when its syscall-entry stop ends. killAt 0 lets it run
// to its end. The process gets its own process group, so the waits here
// never reap another test's child. A process still running after timeout
// is killed and the run is an error.
func killAtCall(bin string, env []string, dir string, killAt int, timeout time.Duration, args ...string) (tracedRun, error) {
	type outcome struct {
		run tracedRun
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// Every ptrace request must come from the thread that is the
		// tracer, the one that forked: the goroutine keeps its thread,
		// and ends with it (never unlocked).
		runtime.LockOSThread()
		run, err := traceOnThread(bin, env, dir, killAt, timeout, args)
		done <- outcome{run, err}
	}()
	o := <-done
	return o.run, o.err
}

func traceOnThread(bin string, env []string, dir string, killAt int, timeout time.Duration, args []string) (tracedRun, error) {
	var run tracedRun
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return run, err
	}
	defer devnull.Close()
	stdout, err := os.CreateTemp("", "killtest-out-")
	if err != nil {
		return run, err
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "killtest-err-")
	if err != nil {
		return run, err
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()
	p, err := os.StartProcess(bin, append([]string{bin}, args...), &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []*os.File{devnull, stdout, stderr},
		Sys:   &syscall.SysProcAttr{Ptrace: true, Setpgid: true},
	})
	if err != nil {
		return run, err
	}
	defer p.Release()
	pid := p.Pid
	var timedOut atomic.Bool
	watchdog := time.AfterFunc(timeout, func() {
		timedOut.Store(true)
		syscall.Kill(pid, syscall.SIGKILL)
	})
	defer watchdog.Stop()
	// The child stops with SIGTRAP once its execve is done.
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return run, fmt.Errorf("wait for the exec stop: %w", err)
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return run, fmt.Errorf("the child did not stop at its exec (status %#x)", ws)
	}
	const opts = syscall.PTRACE_O_TRACECLONE | syscall.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_EXITKILL
	if err := syscall.PtraceSetOptions(pid, opts); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return run, fmt.Errorf("PTRACE_SETOPTIONS: %w", err)
	}
	// inCall says a thread is between its syscall-entry and -exit stops;
	// known are the threads seen, so a new one's first stop (SIGSTOP,
	// from PTRACE_O_TRACECLONE) is told from a real SIGSTOP.
	inCall := map[int]bool{}
	known := map[int]bool{pid: true}
	resume := func(tid, sig int) { syscall.PtraceSyscall(tid, sig) } // ESRCH: it is dying
	resume(pid, 0)
	for {
		tid, err := syscall.Wait4(-pid, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return run, fmt.Errorf("wait: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			delete(inCall, tid)
			if tid == pid {
				break
			}
			continue
		}
		if !ws.Stopped() {
			continue
		}
		sig := ws.StopSignal()
		switch {
		case sig == syscall.SIGTRAP|0x80: // a syscall stop (TRACESYSGOOD)
			entering := !inCall[tid]
			inCall[tid] = entering
			if !entering || run.Killed {
				break
			}
			var regs syscall.PtraceRegs
			if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
				break
			}
			name, ok := burstCalls[regs.Orig_rax]
			if !ok {
				break
			}
			run.Calls = append(run.Calls, describeCall(tid, name, &regs))
			if len(run.Calls) == killAt {
				// Left in its entry stop: SIGKILL ends the process and
				// the call never runs.
				syscall.Kill(pid, syscall.SIGKILL)
				run.Killed = true
				continue
			}
		case sig == syscall.SIGTRAP && ws.TrapCause() != 0: // PTRACE_EVENT_CLONE
		case sig == syscall.SIGSTOP && !known[tid]: // a new thread's first stop
			known[tid] = true
		default: // a signal for the process (SIGURG, Go's preemption): delivered
			known[tid] = true
			resume(tid, int(sig))
			continue
		}
		known[tid] = true
		resume(tid, 0)
	}
	run.Status = ws
	if timedOut.Load() {
		return run, fmt.Errorf("%v: still running after %v: killed", args, timeout)
	}
	out, _ := os.ReadFile(stdout.Name())
	errs, _ := os.ReadFile(stderr.Name())
	run.Stdout, run.Stderr = string(out), string(errs)
	return run, nil
}

// describeCall is a call of burstCalls as "name path…", its paths read
// from the tracee's memory.
func describeCall(tid int, name string, r *syscall.PtraceRegs) string {
	var paths []uint64
	switch name {
	case "linkat":
		paths = []uint64{r.R10} // newpath; oldpath is the unnamed file's /proc link
	case "renameat", "renameat2":
		paths = []uint64{r.Rsi, r.R10}
	case "unlinkat":
		paths = []uint64{r.Rsi}
	case "rename", "link":
		paths = []uint64{r.Rdi, r.Rsi}
	case "unlink":
		paths = []uint64{r.Rdi}
	}
	parts := []string{name}
	for _, addr := range paths {
		parts = append(parts, peekString(tid, uintptr(addr)))
	}
	return strings.Join(parts, " ")
}

// peekString reads a NUL-terminated string of the tracee, a word at a
// time (a longer read could cross into an unmapped page).
func peekString(tid int, addr uintptr) string {
	var out []byte
	var word [8]byte
	for len(out) < 4096 {
		if _, err := syscall.PtracePeekData(tid, addr+uintptr(len(out)), word[:]); err != nil {
			return string(out) + "(unreadable)"
		}
		if i := bytes.IndexByte(word[:], 0); i >= 0 {
			return string(append(out, word[:i]...))
		}
		out = append(out, word[:]...)
	}
	return string(out)
}

// requirePtrace skips where this process may not trace its children (a
// container without CAP_SYS_PTRACE and with Yama at 3, a seccomp filter
// refusing ptrace).
func requirePtrace(t *testing.T) {
	t.Helper()
	run, err := killAtCall("/bin/true", nil, "/", 0, 10*time.Second)
	if err != nil || !run.Status.Exited() || run.Status.ExitStatus() != 0 {
		t.Skipf("cannot trace a child with ptrace here (%v, status %#x): the kill test needs it", err, run.Status)
	}
}

// stagingNameOf is the hidden name a replacement of name is staged under
// (sandbox.stagingName): the contract's recognisable leftover.
func stagingNameOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf(".dsh-fs-%x.tmp", sum[:8])
}

// folderState is every entry of a flat folder and its content.
func folderState(t *testing.T, dir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, name := range harness.DirNames(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		state[name] = string(b)
	}
	return state
}

// stateDiff lists how got differs from want, entry by entry; none when
// they are the same.
func stateDiff(got, want map[string]string) []string {
	var names []string
	for name := range got {
		names = append(names, name)
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	var diffs []string
	for _, name := range names {
		g, inGot := got[name]
		w, inWant := want[name]
		switch {
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%s is there (%q), want it absent", name, g))
		case !inGot:
			diffs = append(diffs, fmt.Sprintf("%s is absent, want %q", name, w))
		case g != w:
			diffs = append(diffs, fmt.Sprintf("%s holds %q, want %q", name, g, w))
		}
	}
	return diffs
}

// killSection is one file's section of a patch under the kill test, and
// what the folder holds of that file once the burst's first n calls ran:
// before until the section's part of the burst begins, after once its
// last call (done) ran, and between, where a file is changed by two
// calls, when only the first (from) did.
type killSection struct {
	patch         string
	done          int
	before, after map[string]string
	between       *killPartial
}

// killPartial is a section's state once its first call ran and before
// its last, and what is then left to patch of the file.
type killPartial struct {
	from  int
	state map[string]string
	rest  string
}

// rest is what is left to patch of the file once the first n calls ran
// ("" when nothing is).
func (s killSection) rest(n int) string {
	switch {
	case n >= s.done:
		return ""
	case s.between != nil && n >= s.between.from:
		return s.between.rest
	}
	return s.patch
}

func (s killSection) state(n int) map[string]string {
	switch {
	case n >= s.done:
		return s.after
	case s.between != nil && n >= s.between.from:
		return s.between.state
	}
	return s.before
}

// TestPatchKilledBetweenRenames runs a five-file patch (an update, an
// addition, a pure move, a removal and a move with new content), killed
// at the entry of each call of its burst in turn, and asserts what the
// contract says is left: each file whole, old or new, the ones committed
// carrying the patch; a moved file at both names rather than at none; the
// only extra name the staging name of the file being replaced, holding
// its new content, when the kill fell between its link and its rename.
// Then the same patch again: it refuses with nothing changed (FS_EXISTS
// for a file it creates, FS_EDIT_NO_MATCH with already_applied for a
// file that carries its hunk), or, killed before its first change,
// applies whole. Then the patch of what is left finishes the job, and
// removes the staging leftover.
//
// The control, a naive check run every time: the state of the run that
// was not killed, checked as the state between the first and second
// call, must fail the check (it would, were the tracer to kill after the
// call rather than before, or not at all).
func TestPatchKilledBetweenRenames(t *testing.T) {
	if !sandbox.Accelerated() {
		// Its burst is O_TMPFILE's (linkat, then renameat); the portable
		// build stages named files before the burst, so its kill points
		// and the states between them are other ones, not pinned here
		// yet (TestWriteKilledIsAtomic and TestPatchNoSpace run there).
		t.Skip("pins the accelerated build's calls (O_TMPFILE); the portable build's burst is not pinned yet")
	}
	requirePtrace(t)
	bin := harness.Bin(t)
	const (
		aOld, aNew = "one\ntwo\nthree\n", "one\nTWO\nthree\n"
		mOld, mNew = "moving2\nx\n", "moving2\ny\n"
		dBody      = "moving\n"
		cBody      = "gone\n"
		newBody    = "new\n"
	)
	stage := stagingNameOf("a.txt")
	// The burst as strace shows it, one line per call: creations first
	// (new.txt, then m2.txt, the new name of a moved file), the
	// replacement of a.txt (a leftover staging name removed, the staged
	// content linked in under it, renamed over a.txt), the move, the
	// removals (c.txt, then m.txt, the old name of the moved file).
	wantCalls := []string{
		"linkat new.txt",
		"linkat m2.txt",
		"unlinkat " + stage,
		"linkat " + stage,
		"renameat " + stage + " a.txt",
		"renameat2 d.txt e.txt",
		"unlinkat c.txt",
		"unlinkat m.txt",
	}
	// n is how many of wantCalls ran.
	sections := []killSection{{
		patch: "*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n",
		done:  5, before: map[string]string{"a.txt": aOld}, after: map[string]string{"a.txt": aNew},
		// linked in, not renamed: the one leftover
		between: &killPartial{from: 4, state: map[string]string{"a.txt": aOld, stage: aNew},
			rest: "*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n"},
	}, {
		patch: "*** Add File: new.txt\n+new\n",
		done:  1, after: map[string]string{"new.txt": newBody},
	}, {
		patch: "*** Update File: d.txt\n*** Move to: e.txt\n",
		done:  6, before: map[string]string{"d.txt": dBody}, after: map[string]string{"e.txt": dBody},
	}, {
		patch: "*** Delete File: c.txt\n",
		done:  7, before: map[string]string{"c.txt": cBody},
	}, {
		patch: "*** Update File: m.txt\n*** Move to: m2.txt\n@@\n moving2\n-x\n+y\n",
		done:  8, before: map[string]string{"m.txt": mOld}, after: map[string]string{"m2.txt": mNew},
		// at both names: the old one is left to remove
		between: &killPartial{from: 2, state: map[string]string{"m.txt": mOld, "m2.txt": mNew},
			rest: "*** Delete File: m.txt\n"},
	}}
	wrap := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	var whole strings.Builder
	for _, s := range sections {
		whole.WriteString(s.patch)
	}
	stateAfter := func(n int) map[string]string {
		all := map[string]string{}
		for _, s := range sections {
			for name, body := range s.state(n) {
				all[name] = body
			}
		}
		return all
	}
	restAfter := func(n int) string {
		var b strings.Builder
		for _, s := range sections {
			b.WriteString(s.rest(n))
		}
		return b.String()
	}
	final := stateAfter(len(wantCalls))

	patchDir := t.TempDir()
	patchFile := filepath.Join(patchDir, "whole.patch")
	if err := os.WriteFile(patchFile, []byte(wrap(whole.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	// fresh lays the original files out in a new workspace.
	fresh := func(t *testing.T) (string, []string) {
		ws := t.TempDir()
		for name, body := range stateAfter(0) {
			if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return ws, harness.Env(t, ws)
	}

	// The run not killed: its calls are the burst of wantCalls, and its
	// result the whole patch's.
	ws, env := fresh(t)
	full, err := killAtCall(bin, env, ws, 0, harness.Timeout, "patch", "--from", patchFile)
	if err != nil {
		t.Fatal(err)
	}
	if !full.Status.Exited() || full.Status.ExitStatus() != 0 {
		t.Fatalf("the traced patch, not killed: status %#x\nstdout: %s\nstderr: %s", full.Status, full.Stdout, full.Stderr)
	}
	if !slices.Equal(full.Calls, wantCalls) {
		t.Fatalf("the burst made the calls\n\t%s\nwant\n\t%s\n(the kill points below mean nothing until this list is right)",
			strings.Join(full.Calls, "\n\t"), strings.Join(wantCalls, "\n\t"))
	}
	fullState := folderState(t, ws)
	if d := stateDiff(fullState, final); d != nil {
		t.Fatalf("the patch not killed left:\n\t%s", strings.Join(d, "\n\t"))
	}
	// The naive control: what the run that was not killed left is not
	// what a kill between the first two calls leaves; a check that
	// passed here would prove nothing.
	if d := stateDiff(fullState, stateAfter(1)); d == nil {
		t.Fatal("control: the complete patch's result passes as the state between its first two renames: the check proves nothing")
	} else {
		t.Logf("control: the complete result checked as the kill after the first rename fails, as it must: %s", strings.Join(d, "; "))
	}

	for k := 1; k <= len(wantCalls); k++ {
		t.Run(fmt.Sprintf("kill-at-%d-%s", k, strings.Fields(wantCalls[k-1])[0]), func(t *testing.T) {
			ran := k - 1
			ws, env := fresh(t)
			run, err := killAtCall(bin, env, ws, k, harness.Timeout, "patch", "--from", patchFile)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Killed || !run.Status.Signaled() || run.Status.Signal() != syscall.SIGKILL {
				t.Fatalf("not killed at call %d (%s): status %#x, calls %q\nstdout: %s\nstderr: %s", k, wantCalls[k-1], run.Status, run.Calls, run.Stdout, run.Stderr)
			}
			if !slices.Equal(run.Calls, wantCalls[:k]) {
				t.Fatalf("calls before the kill: %q, want %q", run.Calls, wantCalls[:k])
			}
			left := folderState(t, ws)
			if d := stateDiff(left, stateAfter(ran)); d != nil {
				t.Fatalf("killed before %q, the folder holds:\n\t%s", wantCalls[k-1], strings.Join(d, "\n\t"))
			}

			// The same patch again.
			code, res, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "patch", "--from", patchFile), nil)
			switch {
			case ran == 0:
				// Killed before its first change: nothing was changed,
				// so it applies whole.
				if code != 0 || !res.OK {
					t.Fatalf("the patch again, after a kill that changed nothing: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
				}
				if d := stateDiff(folderState(t, ws), final); d != nil {
					t.Fatalf("the patch again left:\n\t%s", strings.Join(d, "\n\t"))
				}
				return
			case ran < 5:
				// a.txt, first in the patch, is old; new.txt exists.
				if code != 1 || res.Error.Code != "FS_EXISTS" || !strings.Contains(res.Error.Message, "new.txt") {
					t.Errorf("the patch again: exit %d, want 1 with FS_EXISTS for new.txt\nstdout: %s\nstderr: %s", code, out, errs)
				}
			default:
				if code != 1 || res.Error.Code != "FS_EDIT_NO_MATCH" || !strings.Contains(out, `"already_applied":true`) || !strings.Contains(out, `"file":"a.txt"`) {
					t.Errorf("the patch again: exit %d, want 1 with FS_EDIT_NO_MATCH, already_applied, for a.txt\nstdout: %s\nstderr: %s", code, out, errs)
				}
			}
			if d := stateDiff(folderState(t, ws), left); d != nil {
				t.Fatalf("the refused patch changed the folder:\n\t%s", strings.Join(d, "\n\t"))
			}

			// The patch of what is left finishes it, and the staging
			// leftover goes with the replacement of its file: by an
			// edit of a.txt where one is left (any write, edit or
			// patch of the file removes it first), by the patch
			// otherwise.
			rest := restAfter(ran)
			if _, ok := left[stage]; ok {
				code, _, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "edit", "a.txt", "--old", "two", "--new", "TWO"), nil)
				if code != 0 {
					t.Fatalf("edit of a.txt beside its staging leftover: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
				}
				if _, err := os.Lstat(filepath.Join(ws, stage)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the edit of a.txt left its staging name %s (%v)", stage, err)
				}
				rest = strings.Replace(rest, sections[0].patch, "", 1)
			}
			restFile := filepath.Join(t.TempDir(), "rest.patch")
			if err := os.WriteFile(restFile, []byte(wrap(rest)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, out, errs = harness.Run(t, harness.Cmd(bin, env, ws, "patch", "--from", restFile), nil)
			if code != 0 {
				t.Fatalf("the patch of what is left:\n%s\nexit %d\nstdout: %s\nstderr: %s", rest, code, out, errs)
			}
			if d := stateDiff(folderState(t, ws), final); d != nil {
				t.Fatalf("after the patch of what is left, the folder holds:\n\t%s", strings.Join(d, "\n\t"))
			}
		})
	}
}

// TestPatchAgainAfterKillNeverTwice: after a kill at any call of the
// burst, the same patch again either refuses with nothing changed or, the
// kill having changed nothing, applies whole; it never applies a hunk a
// second time to a file the killed patch committed. That holds for every
// patch that refuses when run again on its own result (a file it
// creates, moves or removes, or a hunk whose old lines its new content
// no longer has), whatever its order: a hunk that only adds lines after
// its context (x.txt here) finds its context again in the new content,
// so such a file must not be the only one committed when the kill comes.
// A patch whose every file would take it again is, after a kill, what it
// is after it ran whole: run again, it applies again.
func TestPatchAgainAfterKillNeverTwice(t *testing.T) {
	requirePtrace(t)
	bin := harness.Bin(t)
	const addBeta = "*** Update File: x.txt\n@@\n alpha\n+beta\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		patch string
		// refused is the code of the refusal after a kill that
		// changed something: the second file's, as x.txt takes the
		// patch again.
		refused string
	}{
		{"then-an-update", map[string]string{"x.txt": "alpha\n", "y.txt": "one\ntwo\n"},
			addBeta + "*** Update File: y.txt\n@@\n one\n-two\n+TWO\n", "FS_EDIT_NO_MATCH"},
		{"then-a-removal", map[string]string{"x.txt": "alpha\n", "c.txt": "gone\n"},
			addBeta + "*** Delete File: c.txt\n", "FS_NOT_FOUND"},
		{"then-a-move", map[string]string{"x.txt": "alpha\n", "d.txt": "moving\n"},
			addBeta + "*** Update File: d.txt\n*** Move to: e.txt\n", "FS_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patchFile := filepath.Join(t.TempDir(), "p.patch")
			if err := os.WriteFile(patchFile, []byte("*** Begin Patch\n"+tc.patch+"*** End Patch\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fresh := func(t *testing.T) (string, []string) {
				ws := t.TempDir()
				harness.WriteTree(t, ws, tc.files)
				return ws, harness.Env(t, ws)
			}
			ws, env := fresh(t)
			full, err := killAtCall(bin, env, ws, 0, harness.Timeout, "patch", "--from", patchFile)
			if err != nil {
				t.Fatal(err)
			}
			if !full.Status.Exited() || full.Status.ExitStatus() != 0 {
				t.Fatalf("the patch not killed: status %#x\nstdout: %s\nstderr: %s", full.Status, full.Stdout, full.Stderr)
			}
			final := folderState(t, ws)
			// The premise: the patch refuses on its own result.
			if code, _, out, _ := harness.Run(t, harness.Cmd(bin, env, ws, "patch", "--from", patchFile), nil); code == 0 {
				t.Fatalf("the patch applies again to its own result (%s): the case tests nothing", out)
			}
			t.Logf("the burst: %q", full.Calls)
			for k := 1; k <= len(full.Calls); k++ {
				ws, env := fresh(t)
				run, err := killAtCall(bin, env, ws, k, harness.Timeout, "patch", "--from", patchFile)
				if err != nil {
					t.Fatal(err)
				}
				if !run.Killed {
					t.Fatalf("kill at %d: not killed (status %#x)", k, run.Status)
				}
				left := folderState(t, ws)
				code, res, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "patch", "--from", patchFile), nil)
				after := folderState(t, ws)
				switch {
				case stateDiff(withoutStaging(left), tc.files) == nil:
					// The kill changed nothing (a staging name aside,
					// which the replacement of its file removes): the
					// patch applies whole.
					if d := stateDiff(after, final); code != 0 || d != nil {
						t.Errorf("killed before %q, which changed nothing, the patch again: exit %d, left\n\t%s\nstdout: %s\nstderr: %s", run.Calls[k-1], code, strings.Join(d, "\n\t"), out, errs)
					}
				case code == 0:
					t.Errorf("killed before %q (leaving %v), the same patch again applied, leaving\n\t%s\nwant a refusal with nothing changed",
						run.Calls[k-1], left, strings.Join(stateDiff(after, final), "\n\t"))
				default:
					if res.Error.Code != tc.refused {
						t.Errorf("killed before %q, the same patch again: exit %d, want 1 with %s\nstdout: %s\nstderr: %s", run.Calls[k-1], code, tc.refused, out, errs)
					}
					if d := stateDiff(after, left); d != nil {
						t.Errorf("killed before %q, the refused patch changed:\n\t%s", run.Calls[k-1], strings.Join(d, "\n\t"))
					}
				}
			}
		})
	}
}

// withoutStaging is state less the staging names of sandbox.Temp.
func withoutStaging(state map[string]string) map[string]string {
	out := map[string]string{}
	for name, body := range state {
		if !strings.HasPrefix(name, ".dsh-fs-") {
			out[name] = body
		}
	}
	return out
}
