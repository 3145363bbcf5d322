package supervisor

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// A session starts from a thread of the supervisor rather than from a
// child process: the thread takes the session's mount and network
// namespaces, the plan is applied there (child.Apply), and the
// session's first process is forked from it (child.Start). One Go
// process then starts the session, not two. A user namespace may only
// be taken by a process of one thread, so for an ordinary user's mount
// layer the thread takes none: the first process takes its user, mount
// and network namespaces as it is forked, and makes the session there
// with raw system calls (child.StartInUserNamespace). Only where those
// calls cannot make its mount layer (a kernel without the modern mount
// API, more writable folders or kept paths than they hold) does such a
// session still start from a child (child.Run).

// inThread says whether a session with or without a mount layer
// (mounts) starts from a thread of the supervisor (see above): for an
// ordinary user's, where the kernel has the modern mount API. Its plan
// may still ask for more than the compiled mounts hold (compileMounts):
// such a session starts from the child after all, readied for it too.
func inThread(mounts bool) bool {
	return !ownUserNamespace(mounts) || child.MountAPI() == nil
}

// compileMounts compiles spec's mount layer for the first process to
// make itself in dir (child.CompileFiles), and says whether it can: the
// ops are those it is then started with (StartInUserNamespace), compiled
// once. None are needed where spec has no mount layer.
func compileMounts(spec plan.Plan, dir string) ([]rawinit.Op, bool) {
	if spec.Files == nil {
		return nil, true
	}
	ops, err := child.CompileFiles(spec.Files, child.FilesTarget{EmptyFile: spec.EmptyFile, Dir: dir, UserNamespace: true})
	return ops, err == nil
}

// ownUserNamespace says whether a session with or without a mount layer
// (mounts) that starts from a thread has its first process take a user
// namespace of its own (see above).
func ownUserNamespace(mounts bool) bool { return mounts && layout.UserNamespace() }

// threadEnd is how a session started from a thread ended: CMD's exit
// status, and whether every process of the session ended with it.
type threadEnd struct {
	status int
	ended  bool
}

// startInThread starts l's session from a thread of its own with spec,
// and returns once CMD runs, or why it could not. The thread is locked
// for good: it holds the session's namespaces, and the first process's
// parent-death signal follows it, so it waits for the session and then
// ends with its goroutine.
func (s *supervisor) startInThread(spec plan.Plan) error {
	l := s.launched
	files, closeFiles, copied, err := firstFiles(l.child)
	if err != nil {
		l.closeAll()
		return fserr.Wrap(fserr.IO, "exec: the streams: "+err.Error(), err)
	}
	if spec.ProxyFD > 0 {
		// The bridge keeps a descriptor of its own: the launch's copy
		// is closed with the others once the session started.
		bridgeEnd := l.child.ExtraFiles[spec.ProxyFD-3]
		if spec.ProxyFD, err = unix.FcntlInt(bridgeEnd.Fd(), unix.F_DUPFD_CLOEXEC, 0); err != nil {
			closeFiles()
			l.closeAll()
			return fserr.Wrap(fserr.IO, "exec: network layer: "+err.Error(), err)
		}
	}
	if l.userNamespace {
		// Readied for the child, which is not started: the terminal
		// comes back from the first process, and its end from Wait.
		for _, f := range []*os.File{l.handover, l.ended} {
			if f != nil {
				f.Close()
			}
		}
		l.handover, l.ended = nil, nil
	}
	if l.thread == nil {
		l.thread = newSessionThread(l, firstAhead(l.userNamespace, spec.Init, spec.Network))
	}
	started := make(chan error, 1)
	l.threadEnded, l.threadGone = make(chan threadEnd, 1), make(chan struct{})
	l.thread.work <- func(entered error, forked *rawinit.Pending, goBack func()) {
		var first *rawinit.Process
		var master *os.File
		err := entered
		switch {
		case err != nil:
		case l.userNamespace:
			first, master, err = child.StartInUserNamespace(spec, l.child.Dir, files, l.mounts, forked)
		default:
			first, master, err = applyAndStart(spec, l.child.Dir, files)
		}
		// Once the first process holds the session's namespaces, the
		// thread goes back to the supervisor's (startFirst).
		goBack()
		if err != nil {
			if spec.ProxyFD > 0 {
				unix.Close(spec.ProxyFD)
			}
			started <- err
			return
		}
		l.first, l.master = first, master
		started <- nil
		status, ended, _ := first.Wait()
		if !ended {
			// Some process of the session outlasted the init's kill:
			// the session has ended once the kernel ended it with the
			// init.
			<-first.Done()
		}
		copied.Wait()
		l.threadEnded <- threadEnd{status, ended}
		// The thread holds the session's namespaces and is the first
		// process's parent: it ends once that process is reaped.
		<-first.Done()
		close(l.threadGone)
	}
	err = <-started
	closeFiles()
	l.closeSessionEnds()
	if s.relay != nil && s.relay.Slave() != nil {
		s.relay.Slave().Close()
	}
	if err != nil {
		s.childFailed = true
		l.pipes.brokerEnd.Close()
		return fserr.New(fserr.CodeOf(err), "exec: "+err.Error())
	}
	return nil
}

// sessionThread is the thread a session starts from (startInThread),
// readied as soon as the launch knows the session's namespaces: beside
// the plan, it takes them (enterNamespaces) and, where that pays
// (firstAhead), forks the session's first process (rawinit.Fork), which
// waits for its spec; then it waits for the start it is handed, or for
// its release.
type sessionThread struct {
	work    chan func(entered error, forked *rawinit.Pending, goBack func())
	release func()
}

// firstAhead is what the session's first process is forked with beside
// the plan (rawinit.Fork), or nil where it is forked once the plan is
// applied. Ahead where the fork makes a user namespace, with its maps,
// a mount and a network one (an ordinary user's session): about 2 ms
// here, which beside the plan took 4-7 % off the whole start
// (farm-bench, 100 pairs, four runs: wall 0.962, 0.933, 0.940, 0.930).
// Root's fork, from a thread already in the session's namespaces,
// gained nothing there (1.017, 1.010, 1.010, 1.025), nor forked once the
// plan was done (1.010, 1.002, 1.043, 0.994): the plan keeps both
// processors busy, and a fork beside it only moves its cost.
func firstAhead(userNamespace, init, network bool) *rawinit.Early {
	if !userNamespace {
		return nil
	}
	e := child.UserNamespaceEarly(init, network)
	return &e
}

// newSessionThread readies the thread of l's session: locked for good,
// in namespaces of its own for the flags of l's child, at its folder;
// none for a first process that takes a user namespace of its own
// (child.StartInUserNamespace), whose thread only forks.
func newSessionThread(l *launched, ahead *rawinit.Early) *sessionThread {
	flags := l.child.SysProcAttr.Unshareflags | l.child.SysProcAttr.Cloneflags&unix.CLONE_NEWNET
	if l.userNamespace {
		flags = 0
	}
	dir := l.child.Dir
	t := &sessionThread{work: make(chan func(error, *rawinit.Pending, func()), 1)}
	var once sync.Once
	t.release = func() { once.Do(func() { close(t.work) }) }
	go onOwnThread(func() {
		back, err := enterNamespaces(flags, dir)
		goBack := func() {
			if back != nil {
				back()
				back = nil
			}
		}
		var forked *rawinit.Pending
		if err == nil && ahead != nil {
			// Where the fork fails now, the start forks again, and
			// says why if it fails then.
			forked, _ = rawinit.Fork(*ahead)
		}
		// The start handed over (startInThread) is given why the thread
		// could not take the namespaces, the first process forked, and
		// what puts the thread back in the supervisor's; released
		// unused, it ends the first process, goes back and ends.
		if body, ok := <-t.work; ok {
			body(err, forked, goBack)
		}
		forked.Abandon() // nothing once it started
		goBack()
	})
	return t
}

// onOwnThread runs body on a thread locked for good, which the runtime
// ends after it: never the main thread, which the runtime would keep,
// with body's namespaces, and whose end would never send the first
// process its parent-death signal.
func onOwnThread(body func()) {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		body()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // not the main thread: this goroutine holds it
		body()
	}()
	<-done
	runtime.UnlockOSThread()
}

// startFirst takes the namespaces of flags on the calling thread, with
// dir as its working folder, applies spec there and forks the session's
// first process with files as its standard streams and the broker. It
// returns the session's terminal's master where it made one. Once the
// first process holds the session's namespaces, the thread goes back to
// the supervisor's: it holds none of the session's mounts while the
// supervisor ends the session (a placeholder removed while it is still
// a mount point elsewhere costs the kernel a detach).
func startFirst(spec plan.Plan, flags uintptr, dir string, files []int) (*rawinit.Process, *os.File, error) {
	back, err := enterNamespaces(flags, dir)
	if err != nil {
		return nil, nil, err
	}
	defer back()
	return applyAndStart(spec, dir, files)
}

// enterNamespaces takes namespaces of its own for flags on the calling
// thread (takeNamespaces), its mounts private and its working folder dir
// where one is a mount namespace, and returns what puts the thread back
// in the supervisor's. On an error (FS_IO, naming the layer) the thread
// is back already.
func enterNamespaces(flags uintptr, dir string) (back func(), err error) {
	back, err = takeNamespaces(flags)
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "mount layer: "+err.Error(), err)
	}
	if flags&unix.CLONE_NEWNS != 0 {
		// The thread's mounts are its own from here, and so is its
		// working folder (a new mount namespace unshares it): nothing
		// it mounts reaches the person's namespace.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			back()
			return nil, fserr.Wrap(fserr.IO, "mount layer: "+err.Error(), err)
		}
		if err := unix.Chdir(dir); err != nil {
			back()
			return nil, fserr.Wrap(fserr.IO, "the working folder: "+err.Error(), err)
		}
	}
	return back, nil
}

// applyAndStart applies spec on the calling thread, in the session's
// namespaces (enterNamespaces), and forks the session's first process
// from it (startFirst).
func applyAndStart(spec plan.Plan, dir string, files []int) (*rawinit.Process, *os.File, error) {
	mark("thread-namespaces")
	r, err := child.Apply(spec)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	first, err := child.Start(spec, r, dir, files)
	if err != nil {
		if r.Master != nil {
			r.Master.Close()
		}
		return nil, nil, err
	}
	return first, r.Master, nil
}

// takeNamespaces gives the calling thread namespaces of its own for
// flags (CLONE_NEWNS, CLONE_NEWNET), and returns what puts it back in
// the ones it had. Should that fail, the thread keeps the session's
// until it ends, as a thread that took them for good does.
func takeNamespaces(flags uintptr) (back func(), err error) {
	var held []int
	back = func() {
		for i, kind := range []int{unix.CLONE_NEWNS, unix.CLONE_NEWNET} {
			if i < len(held) && held[i] >= 0 {
				unix.Setns(held[i], kind)
				unix.Close(held[i])
			}
		}
	}
	for _, ns := range []struct {
		kind int
		name string
	}{{unix.CLONE_NEWNS, "mnt"}, {unix.CLONE_NEWNET, "net"}} {
		fd := -1
		if flags&uintptr(ns.kind) != 0 {
			if fd, err = unix.Open("/proc/thread-self/ns/"+ns.name, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
				back()
				return nil, err
			}
		}
		held = append(held, fd)
	}
	if flags != 0 {
		if err := unix.Unshare(int(flags)); err != nil {
			back()
			return nil, err
		}
	}
	return back, nil
}

// firstFiles are the descriptors of c's standard streams and its broker
// end, as the first process gets them (0 to 3): a stream that is no file
// is copied through a pipe, as os/exec does, and copied is done once
// every copy of output ended. closeFiles closes what it opened, once the
// session holds its own copies.
func firstFiles(c *exec.Cmd) (fds []int, closeFiles func(), copied *sync.WaitGroup, err error) {
	// The copies wait on wg, never on the result copied, which a failure
	// sets to nil while they run.
	wg := &sync.WaitGroup{}
	var mine []*os.File
	closeFiles = func() {
		for _, f := range mine {
			f.Close()
		}
	}
	file := func(stream any, in bool) (int, error) {
		if f, ok := stream.(*os.File); ok {
			return int(f.Fd()), nil
		}
		if stream == nil {
			f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return -1, err
			}
			mine = append(mine, f)
			return int(f.Fd()), nil
		}
		r, w, err := os.Pipe()
		if err != nil {
			return -1, err
		}
		if in {
			// Not waited for: a reader may never end.
			mine = append(mine, r)
			go func() { io.Copy(w, stream.(io.Reader)); w.Close() }()
			return int(r.Fd()), nil
		}
		wg.Add(1)
		mine = append(mine, w)
		go func() { defer wg.Done(); io.Copy(stream.(io.Writer), r); r.Close() }()
		return int(w.Fd()), nil
	}
	for i, stream := range []any{streamOf(c.Stdin), streamOf(c.Stdout), streamOf(c.Stderr)} {
		fd, err := file(stream, i == 0)
		if err != nil {
			closeFiles()
			return nil, nil, nil, err
		}
		fds = append(fds, fd)
	}
	return append(fds, int(c.ExtraFiles[0].Fd())), closeFiles, wg, nil
}

// streamOf is a stream of os/exec's as the first process gets it: nil
// where it is unset, or a nil file.
func streamOf(v any) any {
	if f, ok := v.(*os.File); ok && f == nil {
		return nil
	}
	return v
}

// signal passes sig on to l's session: to its first process, forked from
// the thread or the child.
func (l *launched) signal(sig os.Signal) {
	if l.first != nil {
		l.first.Signal(sig.(syscall.Signal))
		return
	}
	if l.child.Process != nil {
		l.child.Process.Signal(sig)
	}
}

// firstPid is l's session's first process: the one forked from the
// thread, or the child's first child; 0 before it runs.
func (l *launched) firstPid() int {
	if l.first != nil {
		return l.first.Pid()
	}
	if pid := l.pid(); pid != 0 {
		return firstChild(pid)
	}
	return 0
}

// pid is the process of l's session the supervisor started, 0 before.
func (l *launched) pid() int {
	if l.first != nil {
		return l.first.Pid()
	}
	if l.child.Process != nil {
		return l.child.Process.Pid
	}
	return 0
}
