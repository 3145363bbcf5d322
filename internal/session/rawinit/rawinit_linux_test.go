package rawinit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// needRoot skips a test that makes namespaces and layers as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("rawinit's tests make PID and mount namespaces: run them as root")
	}
}

// shell is the spec of sh -c script, its stdout and stderr the pipe
// whose read end out returns, stdin /dev/null.
func shell(t *testing.T, script string) (Spec, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close(); null.Close() })
	return Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
		Ctty: -1, Files: []int{int(null.Fd()), int(w.Fd()), int(w.Fd())}}, r
}

// startIn starts s from a thread of its own that took a private mount
// namespace first, as a session's supervisor does, so a /proc the init
// mounts is the session's alone; the thread ends once Start returned.
func startIn(t *testing.T, s Spec, w *os.File) (*Process, error) {
	t.Helper()
	return startOn(t, s, w, nil)
}

// startOn is startIn whose thread also calls before, once in its
// namespace.
func startOn(t *testing.T, s Spec, w *os.File, before func() error) (*Process, error) {
	t.Helper()
	type started struct {
		p   *Process
		err error
	}
	c := make(chan started, 1)
	body := func() {
		runtime.LockOSThread() // for good: the thread's mount namespace is the session's
		if err := privateMounts(); err != nil {
			c <- started{nil, err}
			return
		}
		if before != nil {
			if err := before(); err != nil {
				c <- started{nil, err}
				return
			}
		}
		p, err := Start(s)
		c <- started{p, err}
	}
	go onEndingThread(body)
	got := <-c
	if w != nil {
		w.Close() // the test's copy of CMD's output: EOF once the session's are closed
	}
	return got.p, got.err
}

// privateMounts gives the calling thread a mount namespace of its own,
// its mounts private, as a session's supervisor's thread has.
func privateMounts() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return err
	}
	return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
}

// onEndingThread runs body, which locks its thread for good, on a thread
// the runtime ends after it: never the main thread, which it keeps.
func onEndingThread(body func()) {
	runtime.LockOSThread()
	if syscall.Gettid() != os.Getpid() {
		body()
		return
	}
	// The main thread, held here, so body runs on another.
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
	}()
	<-done
	runtime.UnlockOSThread()
}

// run starts s and returns CMD's output (its stdout pipe read to EOF),
// status and ended.
func run(t *testing.T, s Spec, out *os.File) (string, int, bool) {
	t.Helper()
	w := os.NewFile(uintptr(s.Files[1]), "w")
	p, err := startIn(t, s, w)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	b, _ := io.ReadAll(out)
	status, ended, err := p.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	<-p.Done()
	return string(b), status, ended
}

// TestExitStatus: CMD's exit status comes back, and 128+N for signal N;
// an init says the session ended, a CMD started alone never does.
func TestExitStatus(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name   string
		init   bool
		script string
		want   int
	}{
		{"init exit 3", true, "exit 3", 3},
		{"init killed by SIGTERM", true, "kill -TERM $$", 128 + 15},
		{"alone exit 3", false, "exit 3", 3},
		{"alone killed by SIGKILL", false, "kill -KILL $$", 128 + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, out := shell(t, tc.script)
			s.Init, s.MountProc = tc.init, tc.init
			_, status, ended := run(t, s, out)
			if status != tc.want || ended != tc.init {
				t.Errorf("status %d ended %v, want %d and %v", status, ended, tc.want, tc.init)
			}
		})
	}
}

// TestInitIsPid1: with Init, CMD runs in a PID namespace of its own whose
// /proc is mounted (its own pid is 2), and the init holds none of the
// caller's descriptors but Files and its report of the end.
func TestInitIsPid1(t *testing.T) {
	needRoot(t)
	// CMD waits, reading its stdin, until the test has looked at the
	// init's descriptors: an init whose CMD ended is gone.
	s, out := shell(t, `echo $$; ls /proc | grep -c '^[0-9]'; read x`)
	s.Init, s.MountProc = true, true
	hold, held, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	s.Files[0] = int(hold.Fd())
	w := os.NewFile(uintptr(s.Files[1]), "w")
	p, err := startIn(t, s, w)
	hold.Close()
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(p.Pid()) + "/fd")
	held.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out)
	p.Wait()
	if got := strings.Fields(string(b)); len(got) != 2 || got[0] != "2" || got[1] != "4" {
		t.Errorf("CMD's pid and the processes its /proc shows: %q, want 2 and 4 (init, sh, ls, grep)", got)
	}
	if len(fds) != 4 {
		t.Errorf("the init holds %d descriptors, want its 3 Files and the ended pipe", len(fds))
	}
}

// TestSignalReachesCmd: a signal sent to the init is passed on to CMD,
// whose trap decides its status.
func TestSignalReachesCmd(t *testing.T) {
	needRoot(t)
	s, out := shell(t, `trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done`)
	s.Init = true
	p, err := startIn(t, s, os.NewFile(uintptr(s.Files[1]), "w"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("CMD said %q, %v", buf, err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if status, ended, _ := p.Wait(); status != 42 || !ended {
		t.Errorf("status %d ended %v, want 42 from CMD's trap, ended", status, ended)
	}
	<-p.Done()
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("a signal after the end: %v, want os.ErrProcessDone", err)
	}
}

// TestOrphansEnd: a process CMD left behind, reparented to the init
// (double-forked), is killed at CMD's end, even one that ignores SIGTERM,
// and reaped: the session ended, nothing of it is left.
func TestOrphansEnd(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct{ name, orphan string }{
		{"double-forked", "sleep %s"},
		{"ignoring SIGTERM", "trap '' TERM; sleep %s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9)
			inner := fmt.Sprintf(tc.orphan, mark)
			s, out := shell(t, `sh -c "`+inner+` &" >/dev/null; sleep 0.2; exit 7`)
			s.Init = true
			start := time.Now()
			_, status, ended := run(t, s, out)
			if status != 7 || !ended {
				t.Errorf("status %d ended %v, want 7, ended", status, ended)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the session took %v: the orphan was waited for, not killed", d)
			}
			if pids := withArg(t, mark); len(pids) > 0 {
				t.Errorf("the orphan lives on after the session's end: pids %v", pids)
			}
		})
	}
}

// withArg lists the host's processes one of whose arguments is arg.
func withArg(t *testing.T, arg string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("\x00"+arg+"\x00")) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestFailuresNameTheirStep: each step that fails is reported in the
// words of its layer, with fserr.IO and its errno, and leaves no process.
func TestFailuresNameTheirStep(t *testing.T) {
	needRoot(t)
	closed, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	notRuleset := int(closed.Fd()) // a descriptor, but no ruleset
	defer closed.Close()
	bad := []unix.SockFilter{{Code: 0xffff}}
	// A thread under Landlock may mount nothing, and the first process
	// is forked under its domain.
	ruleset := writableOnly(t, t.TempDir())
	landlocked := func() error {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
		if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); e != 0 {
			return e
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		spec   func(*Spec)
		want   string
		errno  syscall.Errno
		before func() error
	}{
		{"exec, alone", func(s *Spec) { s.Path, s.Argv[0] = "/nonexistent/cmd", "cmd" }, "cmd: no such file or directory", syscall.ENOENT, nil},
		{"exec, init", func(s *Spec) { s.Init, s.Path, s.Argv[0] = true, "/nonexistent/cmd", "cmd" }, "cmd: no such file or directory", syscall.ENOENT, nil},
		{"chdir", func(s *Spec) { s.Dir = "/nonexistent" }, "chdir /nonexistent: no such file or directory", syscall.ENOENT, nil},
		{"landlock", func(s *Spec) { s.Init, s.Layers.Rulesets = true, []int{notRuleset} }, "kernel layer: landlock: ", 0, nil},
		{"seccomp", func(s *Spec) { s.Layers.Filters = [][]unix.SockFilter{bad} }, "kernel calls: seccomp: invalid argument", syscall.EINVAL, nil},
		{"mount /proc", func(s *Spec) { s.Init, s.MountProc = true, true }, "processes layer: mount /proc: operation not permitted", syscall.EPERM, landlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := shell(t, "exit 0")
			tc.spec(&s)
			p, err := startOn(t, s, nil, tc.before)
			if err == nil {
				p.Wait()
				t.Fatal("started")
			}
			if !strings.HasPrefix(err.Error(), tc.want) || fserr.CodeOf(err) != fserr.IO {
				t.Errorf("error %q (%s), want %q… (%s)", err, fserr.CodeOf(err), tc.want, fserr.IO)
			}
			if tc.errno != 0 && !errors.Is(err, tc.errno) {
				t.Errorf("error %q is not %v", err, tc.errno)
			}
			if _, werr := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); werr != syscall.ECHILD {
				t.Errorf("a child is left behind (wait4: %v)", werr)
			}
		})
	}
}

// TestInitKilledFromOutside: an init killed by SIGKILL, which it cannot
// pass on, gives its own status, and ended: the kernel ended its PID
// namespace with it, CMD and all.
func TestInitKilledFromOutside(t *testing.T) {
	needRoot(t)
	mark := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9+1)
	s, out := shell(t, "echo ready; sleep "+mark)
	s.Init = true
	p, err := startIn(t, s, os.NewFile(uintptr(s.Files[1]), "w"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	io.ReadFull(out, buf)
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	status, ended, err := p.Wait()
	if status != 128+9 || !ended || err != nil {
		t.Errorf("status %d ended %v (%v), want %d, ended", status, ended, err, 128+9)
	}
	<-p.Done()
	if pids := withArg(t, mark); len(pids) > 0 {
		t.Errorf("CMD lives on after its init was killed: pids %v", pids)
	}
}

// TestSpecRefused: a spec whose parts contradict each other is refused
// before any fork, as an invalid argument.
func TestSpecRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"no command", Spec{Ctty: -1}},
		{"/proc without a PID namespace", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, MountProc: true}},
		{"a terminal without a session", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: 0, Files: []int{0}}},
		{"a terminal not among Files", Spec{Path: "/bin/true", Argv: []string{"true"}, Session: true, Ctty: 3, Files: []int{0}}},
		{"a ruleset Files replaces", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Files: []int{0, 1},
			Layers: Layers{Rulesets: []int{1}}}},
		{"CLONE_NEWPID asked for", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Clone: unix.CLONE_NEWPID}},
		{"an empty filter", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Layers: Layers{Filters: [][]unix.SockFilter{{}}}}},
		{"a NUL in an argument", Spec{Path: "/bin/true", Argv: []string{"tr\x00ue"}, Ctty: -1}},
		{"a file from a register with no ops", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Files: []int{FromReg(0)}}},
		{"a file from no register", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Files: []int{FromReg(MaxRegisters)},
			Ops: []Op{Call(unix.SYS_GETPID)}}},
		{"a send over no socket", Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1,
			Ops: []Op{Send(0, Str("x"), 'x', "send")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(tc.spec)
			if err == nil {
				p.Wait()
				t.Fatal("started")
			}
			if fserr.CodeOf(err) != fserr.InvalidArgument {
				t.Errorf("%v: %s, want %s", err, fserr.CodeOf(err), fserr.InvalidArgument)
			}
		})
	}
}

// TestParentDeath: with ParentDeath, the session ends when the thread
// that started it ends (here, at once: startIn's goroutine returns).
func TestParentDeath(t *testing.T) {
	needRoot(t)
	s, out := shell(t, "sleep 1000")
	s.Init, s.ParentDeath = true, syscall.SIGKILL
	start := time.Now()
	_, status, ended := run(t, s, out)
	if status != 128+9 || !ended {
		t.Errorf("status %d ended %v, want %d, ended", status, ended, 128+9)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the session outlived its thread for %v", d)
	}
}

// BenchmarkStart is a session's start and end, /bin/true as CMD: alone,
// and as the init's CMD in a PID namespace of its own, from a thread
// in a mount namespace of its own (a /proc mounted in it each time).
func BenchmarkStart(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	for _, init := range []bool{false, true} {
		b.Run("init="+strconv.FormatBool(init), func(b *testing.B) {
			s := Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Init: init, Files: []int{0, 1, 2}}
			c := make(chan error, 1)
			go onEndingThread(func() {
				runtime.LockOSThread()
				if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
					c <- err
					return
				}
				unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
				for b.Loop() {
					p, err := Start(s)
					if err != nil {
						c <- err
						return
					}
					p.Wait()
					<-p.Done()
				}
				c <- nil
			})
			if err := <-c; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestDescriptors: CMD has exactly its Files, -1 closed, and none of the
// caller's other descriptors, not even one without close-on-exec, as a
// caller inherits from its own parent.
func TestDescriptors(t *testing.T) {
	needRoot(t)
	leaked, err := syscall.Dup(2) // dup: without close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)
	for _, init := range []bool{false, true} {
		t.Run("init "+strconv.FormatBool(init), func(t *testing.T) {
			s, out := shell(t, `ls /proc/self/fd | tr '\n' ' '`)
			s.Files[2], s.Init = -1, init
			got, status, _ := run(t, s, out)
			// ls's own folder descriptor is 2, the lowest free one.
			if status != 0 || got != "0 1 2 " {
				t.Errorf("CMD's descriptors %q (status %d), want 0 1 and ls's own 2", got, status)
			}
		})
	}
}

// TestInitHoldsNoHeapCopy: the first process is forked without the
// caller's heap (unshared_linux.go): what the supervisor holds there (a
// secret here) is not in the init's memory, which reads as unmapped at
// that address, while the init still runs CMD.
func TestInitHoldsNoHeapCopy(t *testing.T) {
	needRoot(t)
	if runtime.GOARCH != "amd64" {
		t.Skipf("on %s the first process is a plain copy of the caller", runtime.GOARCH)
	}
	secret := bytes.Repeat([]byte("dsh-fs heap secret "), 4096) // a large object: pages of its own
	s, out := shell(t, `echo ready; read x`)
	s.Init = true
	hold, held, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	s.Files[0] = int(hold.Fd())
	p, err := startIn(t, s, os.NewFile(uintptr(s.Files[1]), "w"))
	hold.Close()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("CMD said %q, %v", buf, err)
	}
	mem, err := os.Open("/proc/" + strconv.Itoa(p.Pid()) + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	n, readErr := mem.ReadAt(got, int64(uintptr(unsafe.Pointer(&secret[len(secret)/2]))))
	mem.Close()
	held.Close()
	p.Wait()
	runtime.KeepAlive(secret)
	if bytes.Contains(got[:n], []byte("heap secret")) {
		t.Errorf("the init holds the caller's heap: read %q at the secret's address", got[:n])
	}
	if readErr == nil {
		t.Errorf("the init has the caller's heap mapped at the secret's address (read %d bytes)", n)
	}
}

// TestStartFromAnyThread: Start called from a goroutine that may move
// from thread to thread (not locked), its system calls letting the
// runtime move it, while other goroutines keep the processors busy: the
// fork keeps what the thread it runs on needs (its TLS word, its C
// library's rseq area), whichever thread that is, and CMD runs every
// time.
func TestStartFromAnyThread(t *testing.T) {
	needRoot(t)
	fd := devNull(t)
	stop := make(chan struct{})
	defer close(stop)
	for range 4 {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	for i := range 300 {
		p, err := Start(Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Init: true, Files: []int{fd, fd, fd}})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if status, ended, err := p.Wait(); status != 0 || !ended || err != nil {
			t.Fatalf("start %d: status %d ended %v (%v), want 0 from CMD", i, status, ended, err)
		}
	}
}

// TestConcurrentStarts: first processes started at once from several
// goroutines each keep their own readied values: what one fork leaves
// out (its caller's heap, another start's values in it) is put back
// before another fork can run.
func TestConcurrentStarts(t *testing.T) {
	needRoot(t)
	fd := devNull(t)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 60 {
				p, err := Start(Spec{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1, Init: true, Files: []int{fd, fd, fd}})
				if err != nil {
					errs <- fmt.Errorf("goroutine %d, start %d: %v", g, i, err)
					return
				}
				if status, ended, err := p.Wait(); status != 0 || !ended || err != nil {
					errs <- fmt.Errorf("goroutine %d, start %d: status %d ended %v (%v), want 0 from CMD", g, i, status, ended, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// devNull is a descriptor of /dev/null, closed at the test's end.
func devNull(t *testing.T) int {
	t.Helper()
	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { null.Close() })
	return int(null.Fd())
}

// TestEndReadInTheKernel: the init's report of the end reaches Wait
// through a blocking descriptor, read by the waiting thread itself, not
// through the runtime's poller (blockingPipe says why).
func TestEndReadInTheKernel(t *testing.T) {
	needRoot(t)
	s, out := shell(t, `read x`)
	s.Init, s.MountProc = true, true
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	defer feed.Close()
	s.Files[0] = int(in.Fd())
	p, err := startIn(t, s, os.NewFile(uintptr(s.Files[1]), "w"))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	// Through the raw descriptor: Fd would make it blocking.
	var flags int
	ferr := errors.New("no descriptor")
	if c, err := p.ended.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	}
	feed.Close()
	io.ReadAll(out)
	if _, _, err := p.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	<-p.Done()
	if ferr != nil {
		t.Fatal(ferr)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Error("the end's report is read through the poller (O_NONBLOCK): a wake-up more before the supervisor knows")
	}
}
