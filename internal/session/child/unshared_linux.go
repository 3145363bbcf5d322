package child

// An ordinary user's session with a mount layer needs a user namespace
// of its own, which no thread of a Go process may take: its first
// process makes it as it is forked (rawinit's Clone), and does there,
// with ops of raw system calls (rawinit.Spec.Ops), what Apply does on a
// root thread, in the same order: the file view (CompileFiles), the
// loopback, the session's devpts and terminal, the bridge's listener.
// What it made and the supervisor keeps (the terminal's master, the
// listener) is sent back over a socket; the write restriction's rules
// on what only its mounts made are added there to the ruleset readied
// here. Then it installs its layers and runs CMD as every first
// process does.

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// The registers of the ops after the file view's, which has closed
// its own by then: a socket, the terminal's master and slave, a path
// of a Landlock rule.
const (
	regSocket = iota
	regMaster
	regSlave
	regRulePath
)

// The tags of what the first process sends back.
const (
	tagMaster   = 'm'
	tagListener = 'l'
)

// landlockRulePathBeneath is LANDLOCK_RULE_PATH_BENEATH (linux/landlock.h).
const landlockRulePathBeneath = 1

// MountAPI is nil where the first process can make the session's mounts
// itself (CompileFiles), else ErrNoMountAPI: an ordinary user's session
// is then started by the child (Run).
func MountAPI() error { return mountAPIWhy() }

// UserNamespaceEarly is what StartInUserNamespace's first process is
// forked with (rawinit.Fork), known before the plan: the init of a PID
// namespace of its own or not, its user and mount namespaces and, with
// network, a network one; it dies with the thread that forks it.
func UserNamespaceEarly(init, network bool) rawinit.Early {
	e := rawinit.Early{Clone: unix.CLONE_NEWUSER | unix.CLONE_NEWNS, Init: init, ParentDeath: syscall.SIGKILL}
	if network {
		e.Clone |= unix.CLONE_NEWNET
	}
	return e
}

// StartInUserNamespace starts p's session from the calling thread, which
// stays in the caller's namespaces: the first process (first, forked
// ahead here with UserNamespaceEarly, or forked now) takes a user namespace of its
// own with the mount one (and the network one where p has it), makes
// the session there with ops (see above), and runs CMD in dir with
// files as its descriptors 0 to len(files)-1. It returns the terminal's
// master where p has one; this process serves the bridge to the proxy
// at p.ProxyFD. mounts are p.Files compiled for dir (CompileFiles), or
// nil to compile them here. Its errors name the layer, as Apply's do.
func StartInUserNamespace(p plan.Plan, dir string, files []int, mounts []rawinit.Op, first *rawinit.Pending) (*rawinit.Process, *os.File, error) {
	defer first.Abandon() // nothing once it started
	c, err := compileSession(p, dir, mounts)
	if err != nil {
		return nil, nil, err
	}
	defer c.close()
	layers, err := readyLayers(p, c.writes)
	defer func() {
		for _, fd := range layers.Rulesets {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return nil, nil, err
	}
	if p.RestrictWrites {
		c.ops = append(c.ops, c.writeRules(layers.Rulesets[0])...)
	}
	files = slices.Clone(files)
	if t := p.Terminal; t != nil && p.Init {
		for _, fd := range t.Streams {
			files[fd] = rawinit.FromReg(regSlave)
		}
	}
	e := UserNamespaceEarly(p.Init, p.Network)
	proc, err := startFirst(first, rawinit.Spec{
		Clone: e.Clone, Init: e.Init, MountProc: p.Init, Session: true, Ctty: p.Ctty, ParentDeath: e.ParentDeath,
		Layers: layers, Ops: c.ops,
		Path: p.Path, Argv: p.Argv, Env: c.env, Dir: dir, Files: files,
	})
	if err != nil {
		return nil, nil, err
	}
	master, err := c.receive(p)
	if err != nil {
		proc.Signal(syscall.SIGKILL)
		proc.Wait()
		return nil, nil, fserr.Wrap(fserr.IO, err.Error(), err)
	}
	return proc, master, nil
}

// startFirst starts s's first process: first, forked ahead for it, or,
// where there is none or it was forked for another spec, one forked now.
func startFirst(first *rawinit.Pending, s rawinit.Spec) (*rawinit.Process, error) {
	if first.Fits(s) {
		return first.Start(s)
	}
	first.Abandon()
	return rawinit.Start(s)
}

// compiled is a session compiled into ops: the ops, CMD's environment,
// and this process's end of the socket the first process sends back on.
type compiled struct {
	ops      []rawinit.Op
	env      []string
	mine     *os.File
	theirs   *os.File
	proxyFD  int
	caches   []string // the write restriction's folders the first process makes
	devices  []string // and its devices
	writable []string
}

func (c *compiled) close() {
	c.mine.Close()
	c.theirs.Close()
}

// compileSession compiles Apply's namespace-wide part of p into ops,
// with p.Files' as mounts where they are compiled already.
func compileSession(p plan.Plan, dir string, mounts []rawinit.Op) (*compiled, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	c := &compiled{env: p.Env, mine: os.NewFile(uintptr(fds[0]), "session-sent"), theirs: os.NewFile(uintptr(fds[1]), "session-sends"),
		ops: make([]rawinit.Op, 0, len(mounts)+64+4*len(p.Caches))} // the mounts, a few dozen, writeRules' (opsFor)
	if c.env == nil {
		c.env = os.Environ()
	}
	fail := func(code fserr.Code, layer string, err error) (*compiled, error) {
		c.close()
		return nil, fserr.Wrap(code, layer+": "+err.Error(), err)
	}
	c.call("mount layer: make / private", unix.SYS_MOUNT, rawinit.Str(""), rawinit.Str("/"), rawinit.Str(""),
		rawinit.Word(unix.MS_REC|unix.MS_PRIVATE), rawinit.Word(0))
	if p.Files != nil {
		ops := mounts
		if ops == nil {
			if ops, err = CompileFiles(p.Files, FilesTarget{EmptyFile: p.EmptyFile, Dir: dir, UserNamespace: true}); err != nil {
				return fail(fserr.CodeOf(err), "mount layer", err)
			}
		}
		base := len(c.ops)
		for _, o := range ops {
			o.Words = "mount layer: " + o.Words
			if o.Kind == rawinit.OpStore {
				o.Into.Op += base
			}
			c.ops = append(c.ops, o)
		}
	}
	if p.Network {
		c.loopbackUp()
	}
	if p.Init {
		c.isolateTerminals()
		if t := p.Terminal; t != nil {
			c.openTerminal(t.Modes)
		}
	}
	if p.ProxyFD > 0 {
		port := 1024 + rand.IntN(60000) // a new network namespace: every port is free
		c.listen(port)
		c.env, c.proxyFD = bridge.Env(c.env, port), p.ProxyFD
	}
	c.writable = append(slices.Clip(p.Writable), p.Caches...)
	c.caches = existingDirs(p.Caches)
	c.devices = append(slices.Clip(shellDevices), shellTerminals)
	if p.Init {
		// The session's own devpts and the ptmx bound over the host's.
		c.devices = slices.DeleteFunc(c.devices, func(d string) bool { return d == "/dev/ptmx" || d == shellTerminals })
	}
	return c, nil
}

// call adds the system call nr with args, its result not kept.
func (c *compiled) call(words string, nr uintptr, args ...rawinit.Arg) *rawinit.Op {
	o := rawinit.Call(nr, args...)
	o.Words = words
	c.ops = append(c.ops, o)
	return &c.ops[len(c.ops)-1]
}

// into adds the system call nr whose result goes to register reg.
func (c *compiled) into(reg int, words string, nr uintptr, args ...rawinit.Arg) {
	c.call(words, nr, args...).Result = reg
}

// loopbackUp is kernel.LoopbackUp: the new network namespace's lo is
// down, with no flag it could keep but IFF_LOOPBACK, which the kernel
// keeps itself.
func (c *compiled) loopbackUp() {
	ifr, _ := unix.NewIfreq("lo")
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK)
	c.into(regSocket, "network layer: loopback", unix.SYS_SOCKET, rawinit.Int(unix.AF_INET), rawinit.Int(unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), rawinit.Int(0))
	c.call("network layer: loopback: bring up", unix.SYS_IOCTL, rawinit.Reg(regSocket), rawinit.Word(unix.SIOCSIFFLAGS),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(ifr)), unsafe.Sizeof(*ifr))))
	c.closeReg(regSocket)
}

func (c *compiled) closeReg(reg int) {
	c.ops = append(c.ops, rawinit.Op{Kind: rawinit.OpClose, Reg: reg, Words: "close"})
}

// isolateTerminals is tty.IsolateTerminals: whether /dev/ptmx is a
// symlink is decided here, on the host's.
func (c *compiled) isolateTerminals() {
	c.call("terminal layer: mount a devpts of the session's own on /dev/pts", unix.SYS_MOUNT, rawinit.Str("devpts"), rawinit.Str("/dev/pts"),
		rawinit.Str("devpts"), rawinit.Word(unix.MS_NOSUID|unix.MS_NOEXEC), rawinit.Str("newinstance,ptmxmode=0666,mode=0620"))
	var st unix.Stat_t
	if err := unix.Lstat("/dev/ptmx", &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return
	}
	c.call("terminal layer: bind /dev/pts/ptmx over /dev/ptmx", unix.SYS_MOUNT, rawinit.Str("/dev/pts/ptmx"), rawinit.Str("/dev/ptmx"),
		rawinit.Str(""), rawinit.Word(unix.MS_BIND), rawinit.Word(0))
}

// openTerminal is tty.OpenTerminal: the slave is left in regSlave, for
// Files, and the master sent back.
func (c *compiled) openTerminal(modes tty.Modes) {
	var zero int32
	c.into(regMaster, "terminal layer: open /dev/ptmx", unix.SYS_OPENAT, rawinit.Int(unix.AT_FDCWD), rawinit.Str("/dev/ptmx"),
		rawinit.Int(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC), rawinit.Word(0))
	c.call("terminal layer: unlock the pseudo-terminal", unix.SYS_IOCTL, rawinit.Reg(regMaster), rawinit.Word(unix.TIOCSPTLCK),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&zero)), 4)))
	c.into(regSlave, "terminal layer: open the pseudo-terminal's slave", unix.SYS_IOCTL, rawinit.Reg(regMaster), rawinit.Word(unix.TIOCGPTPEER),
		rawinit.Word(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	c.call("terminal layer: terminal modes", unix.SYS_IOCTL, rawinit.Reg(regSlave), rawinit.Word(unix.TCSETS),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&modes.Termios)), unsafe.Sizeof(modes.Termios))))
	c.call("terminal layer: window size", unix.SYS_IOCTL, rawinit.Reg(regSlave), rawinit.Word(unix.TIOCSWINSZ),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&modes.Size)), unsafe.Sizeof(modes.Size))))
	c.ops = append(c.ops, rawinit.Send(regMaster, rawinit.Int(int(c.theirs.Fd())), tagMaster, "terminal layer: hand the terminal over"))
	c.closeReg(regMaster)
}

// listen makes the bridge's listener on 127.0.0.1:port, as
// bridge.Listen does, and sends it back.
func (c *compiled) listen(port int) {
	sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte{127, 0, 0, 1}}
	sa.Port = uint16(port>>8&0xff | port&0xff<<8) // network order
	c.into(regSocket, "network layer: proxy bridge: socket", unix.SYS_SOCKET, rawinit.Int(unix.AF_INET),
		rawinit.Int(unix.SOCK_STREAM|unix.SOCK_CLOEXEC), rawinit.Int(0))
	c.call("network layer: proxy bridge: bind", unix.SYS_BIND, rawinit.Reg(regSocket),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))), rawinit.Word(unsafe.Sizeof(sa)))
	c.call("network layer: proxy bridge: listen", unix.SYS_LISTEN, rawinit.Reg(regSocket), rawinit.Int(unix.SOMAXCONN))
	c.ops = append(c.ops, rawinit.Send(regSocket, rawinit.Int(int(c.theirs.Fd())), tagListener, "network layer: proxy bridge: hand the listener over"))
	c.closeReg(regSocket)
}

// writes is the write restriction's ruleset without what the first
// process makes: the caches' overlays, and with an init the session's
// devpts and ptmx (writeRules adds them there).
func (c *compiled) writes() (int, error) {
	roots := slices.DeleteFunc(slices.Clone(c.writable), func(d string) bool { return slices.Contains(c.caches, d) })
	return writesRulesetOf(roots, c.devices)
}

// writeRules add to the ruleset fd the rules writes left out, as
// kernel.WritesRuleset makes them: each path opened O_PATH, a device
// that is missing skipped.
func (c *compiled) writeRules(fd int) []rawinit.Op {
	dirs, devices := kernel.WritesRights()
	ops := make([]rawinit.Op, 0, 4*(len(c.caches)+2))
	add := func(path string, rights uint64, ignoreMissing bool) {
		// struct landlock_path_beneath_attr, packed: allowed_access, then
		// parent_fd at byte 8, which the op before fills.
		var attr [12]byte
		*(*uint64)(unsafe.Pointer(&attr[0])) = rights
		words := "kernel layer: landlock: " + path
		open := rawinit.Call(unix.SYS_OPENAT, rawinit.Int(unix.AT_FDCWD), rawinit.Str(path), rawinit.Int(unix.O_PATH|unix.O_CLOEXEC), rawinit.Word(0))
		open.Result, open.Words = regRulePath, words
		if ignoreMissing {
			open.SkipOn, open.Skip = unix.ENOENT, 3
		}
		at := len(c.ops) + len(ops) + 2
		ops = append(ops, open,
			rawinit.Op{Kind: rawinit.OpStore, Reg: regRulePath, Into: rawinit.At{Op: at, Arg: 2, Offset: 8}, Words: words},
			rawinit.Call(unix.SYS_LANDLOCK_ADD_RULE, rawinit.Int(fd), rawinit.Word(landlockRulePathBeneath), rawinit.Bytes(attr[:]), rawinit.Word(0)),
			rawinit.Op{Kind: rawinit.OpClose, Reg: regRulePath, Words: words})
		ops[len(ops)-2].Words = words
	}
	for _, d := range c.caches {
		add(d, dirs, false)
	}
	for _, d := range []string{"/dev/ptmx", shellTerminals} {
		if !slices.Contains(c.devices, d) {
			add(d, devices, true)
		}
	}
	return ops
}

// receive takes what the first process sent back: the terminal's master
// (returned) where p has one, the bridge's listener where p has a
// bridge, served from now on.
func (c *compiled) receive(p plan.Plan) (*os.File, error) {
	var master *os.File
	want := 0
	if p.Terminal != nil && p.Init {
		want++
	}
	if c.proxyFD > 0 {
		want++
	}
	for range want {
		tag, f, err := receiveOne(c.mine)
		if err != nil {
			if master != nil {
				master.Close()
			}
			return nil, err
		}
		switch tag {
		case tagMaster:
			master = f
		case tagListener:
			if err := serveBridge(f, c.proxyFD); err != nil {
				if master != nil {
					master.Close()
				}
				return nil, fserr.Wrap(fserr.IO, "network layer: "+err.Error(), err)
			}
		}
	}
	return master, nil
}

// receiveOne receives one descriptor sent with its tag, already there.
func receiveOne(sock *os.File) (byte, *os.File, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
	if err != nil {
		return 0, nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return 0, nil, errors.New("the session sent back no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return 0, nil, errors.New("the session sent back no descriptor")
	}
	return buf[0], os.NewFile(uintptr(fds[0]), "session-sent"), nil
}

// serveBridge serves the bridge to the proxy's channel at fd on the
// listener f, from this process, as startBridge does inside.
func serveBridge(f *os.File, fd int) error {
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return err
	}
	tl, ok := l.(*net.TCPListener)
	if !ok {
		l.Close()
		return errors.New("the proxy bridge's listener is no TCP one")
	}
	unix.CloseOnExec(fd)
	go bridge.Bridge(tl, os.NewFile(uintptr(fd), "proxy-channel"))
	return nil
}
