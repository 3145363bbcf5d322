package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: session WS CMD [ARG...]")
		os.Exit(2)
	}
	ws, argv := os.Args[1], os.Args[2:]
	path, err := lookPath(argv[0])
	if err != nil {
		fail(err)
	}
	// The new root's mount point, made and removed in the host's view:
	// the session's thread is chrooted into what is mounted on it.
	root, err := os.MkdirTemp("", "floor-session-")
	must(err)
	status := make(chan int)
	if os.Geteuid() != 0 {
		go func() { status <- runUser(root, ws, path, argv) }()
	} else {
		go func() { status <- run(root, ws, path, argv) }()
	}
	code := <-status
	os.Remove(root)
	os.Exit(code)
}

// run sets the session up on the calling goroutine's thread, locked for
// good, and waits for CMD.
func run(root, ws, path string, argv []string) int {
	runtime.LockOSThread()
	must(unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWNET))
	must(unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
	must(loopbackUp())
	tree, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.AT_RECURSIVE|unix.OPEN_TREE_CLOEXEC)
	must(err)
	must(unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}))
	must(unix.MoveMount(tree, "", unix.AT_FDCWD, root, unix.MOVE_MOUNT_F_EMPTY_PATH))
	for _, p := range []string{ws, "/tmp"} {
		must(unix.Mount(p, root+p, "", unix.MS_BIND|unix.MS_REC, ""))
	}
	must(unix.Chroot(root))
	p, r, w := newInitPlan(ws, path, argv)
	pid, errno := forkInit(p)
	if errno != 0 {
		fail(fmt.Errorf("fork: %w", errno))
	}
	return waitInit(pid, r, w)
}

// newInitPlan is the init's plan both users share: CMD in ws, the
// Landlock ruleset and the seccomp filter, and the pipe r, w its status
// comes back on.
func newInitPlan(ws, path string, argv []string) (p *initPlan, r, w *os.File) {
	ruleset, err := landlockRuleset(ws, "/tmp")
	must(err)
	filter := seccompFilter()
	r, w, err = os.Pipe()
	must(err)
	return &initPlan{
		procSource: cstring("proc"), procTarget: cstring("/proc"),
		path: cstring(path), argv: cstrings(argv), envv: cstrings(os.Environ()), dir: cstring(ws),
		ruleset: uintptr(ruleset), filter: &filter, status: w.Fd(),
	}, r, w
}

// waitInit waits for the init at pid to write CMD's status on the pipe
// r, w and returns CMD's exit status.
func waitInit(pid int, r, w *os.File) int {
	w.Close()
	var buf [8]byte
	n, _ := r.Read(buf[:])
	var ignored syscall.WaitStatus
	syscall.Wait4(pid, &ignored, 0, nil)
	if n != 8 {
		fail(fmt.Errorf("the session's init said nothing"))
	}
	if step := binary.NativeEndian.Uint32(buf[4:]); step != 0 {
		fail(fmt.Errorf("the session's init failed at step %d: %w", step, syscall.Errno(binary.NativeEndian.Uint32(buf[:4]))))
	}
	return syscall.WaitStatus(binary.NativeEndian.Uint32(buf[:4])).ExitStatus()
}

// runUser is run for an ordinary user, who may not unshare a user
// namespace from a thread of a multithreaded program: the init is forked
// into new user, mount, network and PID namespaces, waits for its user
// namespace's maps, and makes the mount plan (and the loopback) itself,
// as a list of plain system calls that knows no policy (rawOp).
func runUser(root, ws, path string, argv []string) int {
	p, r, w := newInitPlan(ws, path, argv)
	syncR, syncW, err := os.Pipe()
	must(err)
	fdcwd := unix.AT_FDCWD
	ptr := func(s string) uintptr { return uintptr(unsafe.Pointer(cstring(s))) }
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	ifr, err := unix.NewIfreq("lo")
	must(err)
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK)
	p.clone, p.sync = unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWNET, syncR.Fd()
	p.ops = []rawOp{
		{nr: unix.SYS_MOUNT, args: [6]uintptr{0, ptr("/"), 0, unix.MS_REC | unix.MS_PRIVATE}, fdArg: -1},
		{nr: unix.SYS_OPEN_TREE, args: [6]uintptr{uintptr(fdcwd), ptr("/"), unix.OPEN_TREE_CLONE | unix.AT_RECURSIVE | unix.OPEN_TREE_CLOEXEC}, fdArg: -1, keep: true},
		{nr: unix.SYS_MOUNT_SETATTR, args: [6]uintptr{0, ptr(""), unix.AT_EMPTY_PATH | unix.AT_RECURSIVE, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr)}, fdArg: 0},
		{nr: unix.SYS_MOVE_MOUNT, args: [6]uintptr{0, ptr(""), uintptr(fdcwd), ptr(root), unix.MOVE_MOUNT_F_EMPTY_PATH}, fdArg: 0},
		{nr: unix.SYS_MOUNT, args: [6]uintptr{ptr(ws), ptr(root + ws), 0, unix.MS_BIND | unix.MS_REC}, fdArg: -1},
		{nr: unix.SYS_MOUNT, args: [6]uintptr{ptr("/tmp"), ptr(root + "/tmp"), 0, unix.MS_BIND | unix.MS_REC}, fdArg: -1},
		{nr: unix.SYS_CHROOT, args: [6]uintptr{ptr(root)}, fdArg: -1},
		{nr: unix.SYS_SOCKET, args: [6]uintptr{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, fdArg: -1, keep: true},
		{nr: unix.SYS_IOCTL, args: [6]uintptr{0, unix.SIOCSIFFLAGS, uintptr(unsafe.Pointer(ifr))}, fdArg: 0},
	}
	pid, errno := forkInit(p)
	runtime.KeepAlive(attr)
	runtime.KeepAlive(ifr)
	if errno != 0 {
		fail(fmt.Errorf("fork: %w", errno))
	}
	syncR.Close()
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	proc := "/proc/" + strconv.Itoa(pid) + "/"
	must(os.WriteFile(proc+"uid_map", []byte(uid+" "+uid+" 1"), 0))
	must(os.WriteFile(proc+"setgroups", []byte("deny"), 0))
	must(os.WriteFile(proc+"gid_map", []byte(gid+" "+gid+" 1"), 0))
	syncW.Write([]byte{1})
	syncW.Close()
	return waitInit(pid, r, w)
}

// loopbackUp brings up the loopback of the thread's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// landlockRuleset is a ruleset that lets the root be read and executed,
// and everything be done beneath writable.
func landlockRuleset(writable ...string) (int, error) {
	const read = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	const all = read | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	attr := unix.LandlockRulesetAttr{Handled_access_fs: all}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock: %w", errno)
	}
	add := func(path string, access uint64) error {
		dir, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(dir)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(dir)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock rule %s: %w", path, errno)
		}
		return nil
	}
	if err := add("/", read); err != nil {
		return -1, err
	}
	for _, p := range writable {
		if err := add(p, all); err != nil {
			return -1, err
		}
	}
	return int(fd), nil
}

// seccompFilter refuses ptrace and keyctl with EPERM and allows the rest,
// after checking the architecture: the shape of a session's filter.
func seccompFilter() unix.SockFprog {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 1, K: unix.AUDIT_ARCH_X86_64},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 2, K: unix.SYS_PTRACE},
		{Code: jeq, Jt: 1, K: unix.SYS_KEYCTL},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
	return unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
}

func lookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if p := dir + "/" + name; unix.Access(p, unix.X_OK) == nil {
			return p, nil
		}
	}
	if unix.Access(name, unix.X_OK) == nil {
		return name, nil
	}
	return "", fmt.Errorf("%s: not found", name)
}

func cstring(s string) *byte {
	p, err := syscall.BytePtrFromString(s)
	must(err)
	return p
}

func cstrings(ss []string) []*byte {
	p, err := syscall.SlicePtrFromStrings(ss)
	must(err)
	return p
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor/session:", err)
	os.Exit(125)
}
