package rawinit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// forkIn forks a first process for e from a thread of its own in a
// private mount namespace, as startIn starts one, and returns it with a
// function that starts it with s from that same thread (its parent
// death signal follows the thread); the thread ends after that start.
func forkIn(t *testing.T, e Early) (*Pending, func(Spec) (*Process, error)) {
	t.Helper()
	type forked struct {
		p   *Pending
		err error
	}
	type started struct {
		p   *Process
		err error
	}
	fc, specs, sc := make(chan forked, 1), make(chan Spec), make(chan started, 1)
	go onEndingThread(func() {
		runtime.LockOSThread() // for good: the thread's mount namespace is the session's
		if err := privateMounts(); err != nil {
			fc <- forked{nil, err}
			return
		}
		p, err := Fork(e)
		fc <- forked{p, err}
		if err != nil {
			return
		}
		s, ok := <-specs
		if !ok {
			p.Abandon()
			return
		}
		proc, err := p.Start(s)
		sc <- started{proc, err}
	})
	f := <-fc
	if f.err != nil {
		t.Fatalf("Fork: %v", f.err)
	}
	var once bool
	t.Cleanup(func() {
		if !once {
			close(specs)
		}
	})
	return f.p, func(s Spec) (*Process, error) {
		once = true
		specs <- s
		got := <-sc
		return got.p, got.err
	}
}

// TestStartGetsWhatCameAfterTheFork: a first process forked before its
// spec gets the spec and the descriptors the caller made after the fork
// (CMD writes to a pipe that did not exist at the fork), and from the
// hand-over on holds a descriptor table of its own: one the caller
// opens after the start is not the init's.
func TestStartGetsWhatCameAfterTheFork(t *testing.T) {
	needRoot(t)
	p, start := forkIn(t, Early{Init: true})
	r, w, err := os.Pipe() // after the fork
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	defer feed.Close()
	proc, err := start(Spec{Init: true, MountProc: true, Path: "/bin/sh", Argv: []string{"sh", "-c", "echo after the fork; read x"},
		Env: []string{"PATH=/usr/bin:/bin"}, Ctty: -1, Files: []int{int(in.Fd()), int(w.Fd()), int(w.Fd())}})
	w.Close()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if proc.Pid() != p.pid {
		t.Errorf("started pid %d, forked %d", proc.Pid(), p.pid)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if line != "after the fork\n" {
		t.Errorf("CMD wrote %q (%v)", line, err)
	}
	later, err := unix.FcntlInt(r.Fd(), unix.F_DUPFD_CLOEXEC, 900) // after the start
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(later)
	_, statErr := os.Stat("/proc/" + strconv.Itoa(proc.Pid()) + "/fd/" + strconv.Itoa(later))
	feed.Write([]byte("\n"))
	feed.Close()
	io.Copy(io.Discard, r)
	if status, ended, err := proc.Wait(); status != 0 || !ended || err != nil {
		t.Errorf("status %d ended %v (%v)", status, ended, err)
	}
	if statErr == nil {
		t.Errorf("the init has descriptor %d, opened by the caller after the start: their table is shared", later)
	}
}

// TestUnstartedLeavesNothing: a first process that is never started (
// abandoned, handed a spec it was not forked for, killed while it
// waits) is ended and reaped, its start fails with the code that says
// why and within a moment (never waiting on the report pipe its
// caller's table still holds), and the caller holds no descriptor more
// than before the fork.
func TestUnstartedLeavesNothing(t *testing.T) {
	needRoot(t)
	trueSpec := Spec{Init: true, Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Files: []int{0, 1, 2}}
	for _, tc := range []struct {
		name   string
		before func(p *Pending)
		spec   Spec
		code   fserr.Code
		words  string
	}{
		{"abandoned", func(p *Pending) { p.Abandon(); p.Abandon() }, trueSpec, fserr.InvalidArgument, "started twice"},
		{"another spec", func(*Pending) {}, Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1}, fserr.InvalidArgument, "not the one"},
		{"killed while it waits", func(p *Pending) { syscall.Kill(p.pid, syscall.SIGKILL) }, trueSpec, fserr.IO, "ended before its start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := openDescriptors(t)
			p, err := Fork(Early{Init: true})
			if err != nil {
				t.Fatal(err)
			}
			tc.before(p)
			done := make(chan error, 1)
			go func() {
				_, err := p.Start(tc.spec)
				done <- err
			}()
			select {
			case err := <-done:
				if fserr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.words) {
					t.Errorf("Start: %v, want %s: …%s…", err, tc.code, tc.words)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Start waits for a first process that will never report")
			}
			if err := syscall.Kill(p.pid, 0); err != syscall.ESRCH {
				t.Errorf("the first process %d is still there (kill: %v)", p.pid, err)
			}
			if after := openDescriptors(t); after != before {
				t.Errorf("%d descriptors open after, %d before", after, before)
			}
		})
	}
}

// TestPendingDiesWithItsThread: a first process that waits dies with
// the thread that forked it (ParentDeath), as a started one does.
func TestPendingDiesWithItsThread(t *testing.T) {
	needRoot(t)
	pc, release := make(chan *Pending, 1), make(chan struct{})
	go onEndingThread(func() {
		runtime.LockOSThread() // for good: the thread ends with this function
		p, err := Fork(Early{Init: true, ParentDeath: syscall.SIGKILL})
		if err != nil {
			t.Error(err)
		}
		pc <- p
		<-release
	})
	p := <-pc
	if p == nil {
		return
	}
	p.ended = true
	defer p.a.unmap()
	defer p.closeAll()
	ended := make(chan syscall.WaitStatus, 1)
	go func() {
		var ws syscall.WaitStatus
		syscall.Wait4(p.pid, &ws, 0, nil)
		ended <- ws
	}()
	select {
	case ws := <-ended:
		t.Fatalf("the first process ended while its thread was there: %v", ws)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case ws := <-ended:
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("the first process ended %v, want killed by SIGKILL", ws)
		}
	case <-time.After(10 * time.Second):
		syscall.Kill(p.pid, syscall.SIGKILL)
		t.Fatal("the first process outlived the thread that forked it")
	}
}

// pendingHelper is the name this test binary answers to as the helper of
// TestPendingDiesWithItsCaller (TestMain): it forks a first process with
// no parent death signal, says its pid, and waits to be killed.
const pendingHelper = "rawinit-pending"

// runPendingHelper is pendingHelper's life.
func runPendingHelper() int {
	p, err := Fork(Early{Init: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	fmt.Println(p.pid)
	io.Copy(io.Discard, os.Stdin)
	p.Abandon()
	return 0
}

// TestPendingDiesWithItsCaller: a first process that waits ends when
// the process that forked it ends, even with no parent death signal (as
// when the caller dies before the child could ask for one): it watches
// its caller's pidfd. Without that, it would wait for good on a
// go-ahead whose write end its own descriptor table holds.
func TestPendingDiesWithItsCaller(t *testing.T) {
	needRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(t.TempDir(), pendingHelper)
	if err := os.Symlink(self, helper); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(helper)
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		c.Process.Kill()
		c.Wait()
		t.Fatalf("the helper said %q", line)
	}
	c.Process.Kill()
	c.Wait()
	// Orphaned, it is reaped by whoever reaps orphans here, or left a
	// zombie where nobody does: either way it has ended.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the first process %d outlived its caller: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openDescriptors counts this process's open descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestLayersMadeAfterTheFork: a Landlock ruleset made after the fork,
// at a descriptor above the hand-over's pipes, is the one the first
// process installs, not one its placing of descriptors wrote over.
func TestLayersMadeAfterTheFork(t *testing.T) {
	needRoot(t)
	in, out := t.TempDir(), t.TempDir()
	for _, init := range []bool{true, false} {
		t.Run("init "+strconv.FormatBool(init), func(t *testing.T) {
			_, start := forkIn(t, Early{Init: init})
			s, stdout := shell(t, `cd "$1"; echo in > f && echo wrote-in; (echo out > "$2/f") 2>&- || echo refused-out`)
			s.Argv = append(s.Argv, "sh", in, out)
			s.Init, s.MountProc = init, init
			s.Layers = Layers{Rulesets: []int{writableOnly(t, in)}}
			w := os.NewFile(uintptr(s.Files[1]), "w")
			p, err := start(s)
			w.Close()
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			got, _ := io.ReadAll(stdout)
			if status, _, _ := p.Wait(); status != 0 || string(got) != "wrote-in\nrefused-out\n" {
				t.Errorf("CMD (status %d) said %q, want wrote-in, refused-out", status, got)
			}
		})
	}
}

// TestReportAfterALook: a first process that reports its hand-over and
// ends (CMD ran and exited) between the caller's look at the report pipe
// and its look at the process is started, not taken for one that died
// first: the pipe is looked at once more. Here the report is written as
// the process's end is looked at.
func TestReportAfterALook(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var waitErr error
	c.Control(func(fd uintptr) {
		waitErr = awaitReport(int(fd), func() bool {
			w.Write(make([]byte, 8)) // the hand-over's report, then the end
			return true
		})
	})
	if waitErr != nil {
		t.Errorf("a report written before the end was seen: %v", waitErr)
	}
	// With no report at all, the end is the answer.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	c2, _ := r2.SyscallConn()
	c2.Control(func(fd uintptr) { waitErr = awaitReport(int(fd), func() bool { return true }) })
	if fserr.CodeOf(waitErr) != fserr.IO {
		t.Errorf("no report and the end seen: %v, want FS_IO", waitErr)
	}
}
