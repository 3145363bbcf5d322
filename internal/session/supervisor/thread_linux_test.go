package supervisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// threadHelper is the name this test binary answers to as the helper of
// TestThreadFailures (TestMain), its one argument a threadCase's name:
// in a process of its own, it starts a session from the supervisor's
// thread (startInThread) where the kernel refuses one of its steps, and
// prints what came of it (threadOutcome) as JSON. The conditions are
// process-wide (a limit on descriptors, a seccomp filter on every
// thread), so they never reach the test binary itself.
const threadHelper = "supervisor-thread-case"

func init() { testHelpers[threadHelper] = runThreadCase }

// threadCase is a condition under which startInThread fails.
type threadCase struct {
	name string
	// free is how many descriptors RLIMIT_NOFILE leaves the thread
	// once the session's ends are made; -1 leaves the limit alone.
	free int
	// refuse are the system calls a filter refuses with EPERM on
	// every thread.
	refuse []uint32
	// refuseClone, when not 0, are the flags of the clone a filter
	// refuses with EPERM on every thread (the first process's fork;
	// the runtime's threads are cloned with others).
	refuseClone uint32
	// userNamespace starts an ordinary user's session: its first
	// process takes its own user namespace (StartInUserNamespace),
	// and the channels readied for the child are closed.
	userNamespace bool
	// buffers makes CMD's stdout and stderr a buffer, which reaches
	// the first process through a pipe; nilStdin leaves stdin unset
	// (/dev/null); proxy gives the session a proxy channel.
	buffers, nilStdin, proxy bool
	dir                      string // the session's working folder
	want                     string // the error's message
}

var threadCases = []threadCase{
	{name: "mount namespace not opened", free: 0, dir: "/", want: "exec: mount layer: too many open files"},
	{name: "network namespace not opened", free: 1, dir: "/", want: "exec: mount layer: too many open files"},
	{name: "unshare refused", free: -1, refuse: []uint32{unix.SYS_UNSHARE}, proxy: true, dir: "/",
		want: "exec: mount layer: operation not permitted"},
	{name: "no pipe for a stream", free: 2, buffers: true, dir: "/", want: "exec: the streams: pipe2: too many open files"},
	{name: "proxy channel not duplicated", free: 1, nilStdin: true, proxy: true, dir: "/",
		want: "exec: network layer: too many open files"},
	{name: "an ordinary user's first process not forked", free: -1, userNamespace: true, proxy: true, buffers: true,
		refuseClone: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_FILES | uint32(syscall.SIGCHLD), dir: "/",
		want: "exec: rawinit: fork: operation not permitted"},
	// After the unshare: the thread cannot go back (setns refused), so
	// it keeps the session's namespaces and must end, never serve
	// another goroutine.
	{name: "no working folder, no way back", free: -1, refuse: []uint32{unix.SYS_SETNS}, dir: "/nonexistent-dsh-fs-folder",
		want: "exec: the working folder: no such file or directory"},
}

// threadOutcome is what the helper saw: the error's code and message,
// the descriptors left open that were not before, the threads left in
// a namespace that is not the process's, and whether a child is left.
type threadOutcome struct {
	Code, Message string
	Leaked        []string
	Foreign       []string
	Child         bool
}

// TestThreadFailures: where the kernel refuses a step of the session's
// start on the supervisor's thread, startInThread fails with FS_IO in
// the words of the step's layer, closes everything it opened, leaves no
// process and no thread in the session's namespaces.
func TestThreadFailures(t *testing.T) {
	needRoot(t)
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("no seccomp filter for %s here", runtime.GOARCH)
	}
	for _, tc := range threadCases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(testSelf(t), tc.name)
			cmd.Args[0] = threadHelper
			// The race detector's second at exit, spared.
			cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var got threadOutcome
			if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
				t.Fatalf("helper: %v, %v\n%s%s", err, jerr, out, stderr.String())
			}
			if got.Code != string(fserr.IO) || got.Message != tc.want {
				t.Errorf("error %q (%s), want %q (%s)", got.Message, got.Code, tc.want, fserr.IO)
			}
			if len(got.Leaked) > 0 {
				t.Errorf("descriptors left open: %v", got.Leaked)
			}
			if len(got.Foreign) > 0 {
				t.Errorf("threads left in the session's namespaces: %v", got.Foreign)
			}
			if got.Child {
				t.Error("a child is left behind")
			}
		})
	}
}

// runThreadCase is the helper's life (threadHelper); its exit status.
func runThreadCase(name string) int {
	i := slices.IndexFunc(threadCases, func(c threadCase) bool { return c.name == name })
	if i < 0 {
		fmt.Fprintln(os.Stderr, "no thread case", name)
		return 2
	}
	got, err := threadCaseOutcome(threadCases[i])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	json.NewEncoder(os.Stdout).Encode(got)
	return 0
}

// threadCaseOutcome readies a launched session as launch does, under
// c's condition, and starts it from the thread.
func threadCaseOutcome(c threadCase) (threadOutcome, error) {
	var got threadOutcome
	mnt, _ := os.Readlink("/proc/self/ns/mnt")
	net, _ := os.Readlink("/proc/self/ns/net")
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return got, err
	}
	before := descriptors()
	pipes, err := newChildPipes()
	if err != nil {
		return got, err
	}
	cmd := &exec.Cmd{Dir: c.dir, Stdin: null, Stdout: null, Stderr: null,
		ExtraFiles:  []*os.File{pipes.shellEnd, pipes.specR, pipes.errW},
		SysProcAttr: &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS, Cloneflags: unix.CLONE_NEWNET}}
	if c.buffers {
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	}
	if c.nilStdin {
		cmd.Stdin = nil
	}
	var spec plan.Plan
	if c.proxy {
		r, w, err := os.Pipe()
		if err != nil {
			return got, err
		}
		defer w.Close() // the proxy's end: the supervisor's
		before = append(before, descriptor(int(w.Fd())))
		cmd.ExtraFiles = append(cmd.ExtraFiles, r)
		spec.ProxyFD = 2 + len(cmd.ExtraFiles)
	}
	s := &supervisor{launched: &launched{child: cmd, pipes: pipes, ctty: -1, inThread: true, userNamespace: c.userNamespace}}
	if c.userNamespace {
		spec.Path, spec.Argv, spec.Ctty = "/bin/true", []string{"true"}, -1
		// A Landlock ruleset readied before the fork, where the kernel
		// has Landlock.
		spec.RestrictWrites, spec.Writable = true, []string{os.TempDir()}
		// The terminal's handover and the end's pipe, readied for the
		// child: the supervisor's ends.
		handover, theirs, err := os.Pipe()
		if err != nil {
			return got, err
		}
		ended, endedW, err := os.Pipe()
		if err != nil {
			return got, err
		}
		theirs.Close()
		endedW.Close()
		s.launched.handover, s.launched.ended = handover, ended
	}
	if len(c.refuse) > 0 {
		if err := refuseEverywhere(c.refuse); err != nil {
			return got, err
		}
	}
	if c.refuseClone != 0 {
		if err := refuseCloneEverywhere(c.refuseClone); err != nil {
			return got, err
		}
	}
	restore, err := leaveFree(c.free)
	if err != nil {
		return got, err
	}
	err = s.startInThread(spec)
	restore()
	if err == nil {
		return got, fmt.Errorf("started")
	}
	got.Code, got.Message = string(fserr.CodeOf(err)), err.Error()
	// A copy of a stream's pipe ends once its writer closed, and a
	// thread locked for good once its goroutine returned: both are
	// waited for, a bounded while (5 s, spent only where one is left).
	for range 250 {
		got.Leaked, got.Foreign = nil, nil
		for _, fd := range descriptors() {
			if !slices.Contains(before, fd) {
				got.Leaked = append(got.Leaked, fd)
			}
		}
		got.Foreign = foreignThreads(mnt, net)
		if len(got.Leaked) == 0 && len(got.Foreign) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, werr := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
	got.Child = werr != syscall.ECHILD
	return got, nil
}

// descriptors are this process's open descriptors and what each is,
// but the one that lists them.
func descriptors() []string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var fds []string
	for _, e := range entries {
		fd, _ := strconv.Atoi(e.Name())
		if d := descriptor(fd); d != "" {
			fds = append(fds, d)
		}
	}
	return fds
}

// descriptor is fd and what it is; "" once closed.
func descriptor(fd int) string {
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	return strconv.Itoa(fd) + " " + target
}

// foreignThreads are the threads of this process whose mount or network
// namespace is not mnt or net.
func foreignThreads(mnt, net string) []string {
	tasks, _ := os.ReadDir("/proc/self/task")
	var foreign []string
	for _, task := range tasks {
		m, merr := os.Readlink("/proc/self/task/" + task.Name() + "/ns/mnt")
		n, nerr := os.Readlink("/proc/self/task/" + task.Name() + "/ns/net")
		if merr == nil && nerr == nil && (m != mnt || n != net) {
			foreign = append(foreign, task.Name()+": "+m+" "+n)
		}
	}
	return foreign
}

// leaveFree fills every descriptor below the highest open one and sets
// RLIMIT_NOFILE so that the next free opens succeed and the one after
// fails with EMFILE; restore puts the limit back and closes the fillers.
// free -1 changes nothing.
func leaveFree(free int) (restore func(), err error) {
	if free < 0 {
		return func() {}, nil
	}
	highest := 0
	for _, d := range descriptors() {
		fd, _ := strconv.Atoi(strings.Fields(d)[0])
		highest = max(highest, fd)
	}
	var fillers []int
	for {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		if fd > highest {
			unix.Close(fd)
			break
		}
		fillers = append(fillers, fd)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return nil, err
	}
	limit := old
	limit.Cur = uint64(highest + 1 + free)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return nil, err
	}
	return func() {
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		for _, fd := range fillers {
			unix.Close(fd)
		}
	}, nil
}

// refuseEverywhere makes every thread of this process, and every one it
// starts, get EPERM from the system calls nrs (TSYNC), for good.
func refuseEverywhere(nrs []uint32) error { return refuse(nrs, unix.SECCOMP_FILTER_FLAG_TSYNC) }

// refuseOnThread makes the calling thread alone, and what it forks, get
// EPERM from the system calls nrs, for good: the thread is to end with
// its goroutine.
func refuseOnThread(nrs []uint32) error { return refuse(nrs, 0) }

// refuse installs a seccomp filter with flags that refuses nrs with EPERM.
func refuse(nrs []uint32, flags uintptr) error {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	arch := uint32(unix.AUDIT_ARCH_X86_64)
	if runtime.GOARCH == "arm64" {
		arch = unix.AUDIT_ARCH_AARCH64
	}
	n := uint8(len(nrs))
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jf: n + 1},
		{Code: ld, K: 0}, // seccomp_data.nr
	}
	for i, nr := range nrs {
		prog = append(prog, unix.SockFilter{Code: jeq, K: nr, Jt: n - uint8(i)})
	}
	prog = append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)})
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// refuseCloneEverywhere makes every thread of this process, and every
// one it starts, get EPERM from a clone with exactly flags, for good.
func refuseCloneEverywhere(flags uint32) error {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	arch := uint32(unix.AUDIT_ARCH_X86_64)
	if runtime.GOARCH == "arm64" {
		arch = unix.AUDIT_ARCH_AARCH64
	}
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jf: 5},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, K: unix.SYS_CLONE, Jf: 3},
		{Code: ld, K: 16}, // the flags' low word (little-endian)
		{Code: jeq, K: flags, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// TestStartFirstGoesBack: where the session's start fails on the thread
// after it took the session's namespaces (the mounts made private, the
// working folder, CMD itself), startFirst returns FS_IO naming the
// layer, with the thread back in the supervisor's namespaces, none of
// its descriptors left open (the terminal made in the session's devpts
// included) and no process left.
func TestStartFirstGoesBack(t *testing.T) {
	needRoot(t)
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("no seccomp filter for %s here", runtime.GOARCH)
	}
	mnt, _ := os.Readlink("/proc/self/ns/mnt")
	net, _ := os.Readlink("/proc/self/ns/net")
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	fd := int(null.Fd())
	for _, tc := range []struct {
		name   string
		refuse []uint32 // refused on the thread alone
		dir    string
		spec   plan.Plan
		want   string
	}{
		{"mounts not made private", []uint32{unix.SYS_MOUNT}, "/", plan.Plan{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1},
			"mount layer: operation not permitted"},
		{"no working folder", nil, "/nonexistent-dsh-fs-folder", plan.Plan{Path: "/bin/true", Argv: []string{"true"}, Ctty: -1},
			"the working folder: no such file or directory"},
		{"no CMD, with a terminal", nil, "/", plan.Plan{Path: "/nonexistent/cmd", Argv: []string{"cmd"}, Init: true, Ctty: 0,
			Terminal: &plan.Terminal{Streams: []int{0, 1, 2}}}, "cmd: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := descriptors()
			type outcome struct {
				err      error
				mnt, net string
			}
			c := make(chan outcome, 1)
			go onOwnThread(func() {
				if len(tc.refuse) > 0 {
					if err := refuseOnThread(tc.refuse); err != nil {
						c <- outcome{err: err}
						return
					}
				}
				p, _, err := startFirst(tc.spec, unix.CLONE_NEWNS|unix.CLONE_NEWNET, tc.dir, []int{fd, fd, fd, fd})
				if err == nil {
					p.Wait()
				}
				var o outcome
				o.err = err
				o.mnt, _ = os.Readlink("/proc/thread-self/ns/mnt")
				o.net, _ = os.Readlink("/proc/thread-self/ns/net")
				c <- o
			})
			got := <-c
			if got.err == nil {
				t.Fatal("started")
			}
			if got.err.Error() != tc.want || fserr.CodeOf(got.err) != fserr.IO {
				t.Errorf("error %q (%s), want %q (%s)", got.err, fserr.CodeOf(got.err), tc.want, fserr.IO)
			}
			if got.mnt != mnt || got.net != net {
				t.Errorf("the thread is in %s %s after the failure, want the supervisor's %s %s", got.mnt, got.net, mnt, net)
			}
			if after := descriptors(); !slices.Equal(after, before) {
				t.Errorf("descriptors before:\n%s\nafter the failure:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
			if _, werr := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); werr != syscall.ECHILD {
				t.Errorf("a child is left behind (wait4: %v)", werr)
			}
		})
	}
}

// TestReleasedThreadEndsItsFirstProcess: an ordinary user's session
// thread forks the first process ahead of the plan (firstAhead); a
// session that ends before its start (the launch or the plan failed)
// releases the thread, which ends that process and reaps it, and
// closes what it opened for it.
func TestReleasedThreadEndsItsFirstProcess(t *testing.T) {
	needRoot(t)
	before := descriptors()
	l := &launched{child: exec.Command("/bin/true"), userNamespace: true}
	l.child.SysProcAttr = &syscall.SysProcAttr{}
	ahead := firstAhead(true, true, true)
	if ahead == nil {
		t.Fatal("an ordinary user's first process is not forked ahead")
	}
	th := newSessionThread(l, ahead)
	forked := waitFor(t, func() bool { return len(children(t)) > 0 })
	th.release()
	ended := waitFor(t, func() bool { return len(children(t)) == 0 })
	if !forked {
		t.Fatal("no first process was forked ahead")
	}
	if !ended {
		t.Fatalf("the first process outlived its released thread: children %v", children(t))
	}
	waitFor(t, func() bool { return slices.Equal(descriptors(), before) })
	if after := descriptors(); !slices.Equal(after, before) {
		t.Errorf("descriptors before:\n%s\nafter the release:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
}

// children are this process's children, by pid, from every thread's.
func children(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err == nil {
			pids = append(pids, strings.Fields(string(b))...)
		}
	}
	return pids
}

// waitFor says whether cond came true within ten seconds.
func waitFor(t *testing.T, cond func() bool) bool {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
