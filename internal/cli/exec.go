package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/escalation"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/gitguard"
	"github.com/dshfs/dsh-fs/internal/netproxy"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// ExecOptions are the options of dsh-fs exec.
type ExecOptions struct {
	App     *App
	Command *cobra.Command

	// Argv is the command the session runs, its program first.
	Argv []string
}

// NewCmdExec returns the exec command: the agent's shell (or any command)
// under the same policy as the file tool, pinned for every call inside and
// enforced on the whole process tree by the kernel (docs/design.md §10).
func NewCmdExec(app *App, runF func(*ExecOptions) error) *cobra.Command {
	opts := &ExecOptions{App: app}
	c := &cobra.Command{
		Use:   "exec [flags] [--] CMD [ARG...]",
		Short: "Run the agent's shell under the same policy, enforced by the kernel, with brokered escalation",
		Long: `exec runs CMD (the agent's shell) as a session of the policy: it resolves the
policy once, from the trusted sources and its own command line (the harness or
person who types this line is trusted; the managed requirements still cap it),
pins it in a session record the session cannot write (DSH_FS_SESSION), and
restricts CMD's whole process tree with Landlock: writes only beneath the
writable roots and to the terminal and /dev/null-like devices. In a private
mount namespace (as root, or in a user namespace that maps only this user) it
also makes everything outside the writable roots read-only (metadata too),
binds the protected paths (.git/config, .git/hooks, .vscode…) read-only and
hides deny_read paths; the rest of .git stays writable, so git commits.
CMD starts in the workspace root (--cwd).

--config FILE is this session's own trusted file, read after the user's and
capped by the managed requirements: a harness gives each session its own
policy (an approver of its own). It is held to the rules of a trusted file.
Inside a session, --config (a nested exec's too) only narrows.

Every dsh-fs call inside takes the pinned policy as its trusted base. A call
with --escalate is sent to this supervisor over an inherited socket; the
trusted approval (the person at this terminal by default) decides, and the one
approved operation runs outside the kernel layer.

exec passes CMD's exit status through (128+N when a signal N ended it) and
forwards the signals it receives.`,
		Example: `  dsh-fs exec --cwd ~/proj -- bash
  dsh-fs exec --cwd ~/proj --config ~/.config/my-harness/session-1.yaml -- bash
  dsh-fs exec --mode read-only -- sh -c 'make test'
  dsh-fs exec --cwd ~/proj -- go test ./...   # the caches copy-on-write, discarded at the end`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command, opts.Argv = c, args
			if runF != nil {
				return runF(opts)
			}
			return execRun(opts)
		},
	}
	// Everything after CMD is CMD's own: `dsh-fs exec sh -c x`.
	c.Flags().SetInterspersed(false)
	// exec's own --config, in place of the shared one, says what it is
	// here: the session's trusted file (config.Source.ConfigTrusted).
	c.Flags().String(config.FlagConfig, "", "this session's own trusted config file, after the user's and capped by the managed requirements (inside a session: only narrows)")
	return c
}

// exitWith is a run's exit status passed through without a result of its
// own: CMD's under exec, the supervisor's for a forwarded call.
type exitWith int

func (e exitWith) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func execRun(opts *ExecOptions) error {
	a, flags := opts.App, opts.Command.Flags()
	if to, _ := flags.GetString(config.FlagEscalate); to != "" {
		return fserr.New(fserr.InvalidArgument, "--escalate applies to one call, not to a session")
	}
	a.started = true
	a.current = result.Header{Op: "exec"}
	// exec --config FILE is the harness's trusted base for this session
	// (docs/design.md §10); inside a session it only narrows.
	s, err := config.Load(config.Source{Flags: flags, LookupEnv: a.LookupEnv, Locations: a.Locations, FlagsTrusted: true, ConfigTrusted: true})
	if err != nil {
		var de *sandbox.DeniedError
		if errors.As(err, &de) {
			de.Op = "exec"
		}
		return err
	}
	a.current.Mode = string(s.Policy.Mode)
	path, err := exec.LookPath(opts.Argv[0])
	if err != nil {
		return fserr.Wrap(fserr.NotFound, "exec: "+opts.Argv[0]+": command not found", err)
	}
	sup, err := newSupervisor(a, s)
	if err != nil {
		return err
	}
	defer sup.close()
	status, err := sup.runCommand(path, opts.Argv)
	if err != nil {
		return err
	}
	return exitWith(status)
}

// supervisor is the process that starts a session and stays outside it:
// it holds the record and the escalation channel, forwards signals, and
// runs the escalated calls the session sends it.
type supervisor struct {
	// callRunner runs the escalated calls; its self and record are
	// this executable and the session's record.
	callRunner
	app      *App
	settings *config.Settings
	dir      string // the record's private folder
	empty    string // the empty file the mount layer binds over hidden files
	rec      *session.Record
	// nested says exec runs inside a session: it writes no record and
	// runs no broker of its own.
	nested bool
	// askMu puts one question at a time to the person at the terminal.
	askMu sync.Mutex
	// sockets are the paths the Landlock socket right is granted on;
	// nil when the kernel has no such right (sandbox.SocketGrants).
	sockets []string
	// relay stands between the person's terminal and the session's
	// own, while CMD runs; nil when exec's streams hold no terminal.
	relay *tty.Relay
	// git is the git guard's record of the roots' git directories; nil
	// where there is none.
	git *gitguard.Guard
}

// newSupervisor resolves the layers of the session of s and writes its
// record.
func newSupervisor(a *App, s *config.Settings) (*supervisor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "exec: cannot find dsh-fs itself: "+err.Error(), err)
	}
	p := s.Policy
	fence := sandbox.NewFence(p)
	roots, err := fence.Roots()
	if err != nil {
		return nil, err
	}
	abi, kernelWhy, err := sandbox.TreeLayer(p)
	if err != nil {
		return nil, err
	}
	rec := escalation.Record(s, roots)
	rec.Supervisor, rec.SupervisorStart, rec.SupervisorPidNS = os.Getpid(), selfStart(), selfPidNS()
	shell := session.Shell{Landlock: abi, Kernel: kernelWhy, Broker: true, Scoped: abi > 0 && sandbox.ScopesHeld(abi),
		Privileges: session.PrivilegesKept}
	var sockets []string
	if sandbox.SocketLandlock(p) {
		sockets = sandbox.SocketGrants(p)
	}
	if s.Session != nil {
		// Nested: the outer session's record, broker and mount layer
		// serve; this one only narrows (docs/design.md §10). The outer
		// caches' layers are in place, and stay writable.
		if p.Mode == sandbox.WorkspaceWrite {
			shell.Caches = s.Session.Shell.Caches
		}
		return &supervisor{callRunner: callRunner{self: self, record: s.SessionPath}, app: a, settings: s, nested: true,
			rec: &session.Record{Roots: rec.Roots, Shell: shell}, sockets: sockets}, nil
	}
	findCaches := startFindCaches(s)
	if p.Mode == sandbox.DangerFullAccess {
		shell.MountsWhy = "danger-full-access mode"
	} else if ok, why := sandbox.MountLayer(); !ok {
		shell.MountsWhy = why
	} else if err := probeUserNamespace(self); err != nil {
		shell.MountsWhy = "not root, and a user namespace cannot mount here (" + err.Error() + ")"
	} else {
		plan := sandbox.PlanMounts(p, roots)
		shell.Mounts = &plan
	}
	shell.Privileges = sessionPrivileges(p, shell.Mounts != nil)
	shell.OutsideReadOnlyHeld, shell.OutsideReadOnly = outsideReadOnlyLayer(shell.Mounts, shell.MountsWhy)
	shell.TerminalHeld, shell.Terminal = terminalLayer(a, shell.Mounts != nil)
	shell.ProcessesHeld, shell.Processes = processesLayer(shell)
	xdg, _ := a.LookupEnv("XDG_RUNTIME_DIR")
	dir, err := session.Dir(xdg, sandbox.RootPaths(roots))
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "exec: session record: "+err.Error(), err)
	}
	// The caches' layers are readied (the toolchains' answers awaited,
	// the overlays probed) while the sockets and git directories are
	// looked for.
	cachesReady := make(chan cacheSetup, 1)
	go func(mountsWhy string) { cachesReady <- readyCaches(self, dir, s, findCaches(), rec.Roots, mountsWhy) }(shell.MountsWhy)
	shell.SocketsHeld, shell.Sockets = shellSockets(p, shell.Mounts, shell.MountsWhy)
	netPlan := networkLayer(p, shell.Mounts != nil, shell.ProcessesHeld)
	shell.NetworkNamespaced, shell.NetworkTCP, shell.NetworkHeld, shell.Network = netPlan.namespaced, netPlan.tcp, netPlan.held, netPlan.text
	sup := &supervisor{app: a, settings: s, dir: dir, sockets: sockets}
	sup.callRunner = callRunner{self: self, ask: sup.askTerminal}
	sup.git = startGitGuard(a, s, roots, &shell)
	if err := applyCaches(<-cachesReady, &shell); err != nil {
		sup.close()
		return nil, fserr.Wrap(fserr.IO, "exec: caches: "+err.Error(), err)
	}
	rec.Shell = shell
	sup.rec = rec
	if m := shell.Mounts; m != nil {
		rec.DenyIdentities = m.DenyIdentities
		if len(m.HiddenFiles)+len(m.HiddenSockets) > 0 {
			// Before the record, which names it: a hidden hard link
			// reads as this file inside, and the file tool refuses it.
			var id sandbox.DenyIdentity
			if sup.empty, id, err = session.EmptyFile(dir); err != nil {
				sup.close()
				return nil, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
			}
			rec.DenyIdentities = append(rec.DenyIdentities, id)
		}
	}
	if sup.record, err = session.Write(dir, sup.rec); err != nil {
		sup.close()
		return nil, fserr.Wrap(fserr.IO, "exec: session record: "+err.Error(), err)
	}
	return sup, nil
}

// close removes the session's record, and the upper folders of its
// caches' overlays: a record left behind could be named by a later
// session, and what the session wrote in its caches is discarded.
func (s *supervisor) close() {
	if s.dir != "" {
		session.Remove(s.dir)
	}
}

// childSpec is what the child applies before it becomes CMD.
type childSpec struct {
	Path     string             `json:"path"`
	Argv     []string           `json:"argv"`
	Landlock bool               `json:"landlock"`
	Roots    []string           `json:"roots"`
	Mounts   *sandbox.MountPlan `json:"mounts"`
	// Unprivileged says CMD runs with no capability and no_new_privs
	// (sandbox.DropPrivileges).
	Unprivileged bool   `json:"unprivileged"`
	Empty        string `json:"empty"`
	// Caches are the toolchain caches the kernel layer grants besides
	// Roots (writableCaches).
	Caches []string `json:"caches"`
	// Sockets, when not nil, are the grants of the Landlock socket
	// layer (sandbox.RestrictSockets).
	Sockets []string `json:"sockets"`
	// Init makes the child pid 1 of the session's PID namespace: it
	// mounts the session's /proc, starts CMD and stays its init
	// (session.Init). Ctty is the descriptor of CMD's terminal (0 to
	// 2), whose foreground CMD gets; -1 without one.
	Init bool `json:"init"`
	Ctty int  `json:"ctty"`
	// Network says the child is in a network namespace of its own, whose
	// loopback it brings up (networkLayer).
	Network bool `json:"network"`
	// ProxyFD, when not 0, is the descriptor of the channel to the
	// supervisor's proxy, which the child's bridge serves on a loopback
	// port of its own (network: allowlist).
	ProxyFD int `json:"proxy_fd"`
	// TCPPorts, when not nil, are the only ports CMD may connect to over
	// TCP (sandbox.RestrictTCP): the network's layer where there is no
	// network namespace; ProxyPort is then the proxy's on the host's
	// 127.0.0.1 under allowlist, 0 under off.
	TCPPorts  []int `json:"tcp_ports"`
	ProxyPort int   `json:"proxy_port"`
	// Terminal, when not nil, has the child make the session's terminal
	// in the session's own devpts (tty.MakeTerminal) and hand its master
	// to the supervisor.
	Terminal *childTerminal `json:"terminal,omitempty"`
}

// childTerminal is how the child makes the session's terminal: with the
// person's terminal's modes, as each of Streams (the standard streams
// that were the person's terminal; the first is the controlling one),
// its master sent over the socket at descriptor FD.
type childTerminal struct {
	FD      int       `json:"fd"`
	Streams []int     `json:"streams"`
	Modes   tty.Modes `json:"modes"`
}

// childFailure is what the child reports when it could not become CMD.
type childFailure struct {
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
}

// The child's inherited descriptors: the shell keeps the broker, the
// others are the child's alone.
const (
	brokerFD     = 3
	childSpecFD  = 4
	childErrorFD = 5
)

// execChildArg is the argument that makes a dsh-fs process exec's child.
// It is not a command: nothing but the spec exec writes reaches it, and a
// process that runs it only restricts itself.
const execChildArg = "__exec-child"

// runCommand starts CMD at path with argv as the session's child and returns its
// exit status once it ends.
func (s *supervisor) runCommand(path string, argv []string) (int, error) {
	brokerEnd, shellEnd, err := session.NewBroker()
	if err != nil {
		return 0, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return 0, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return 0, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	a := s.app
	child := exec.Command(s.self, execChildArg)
	child.Args[0] = "dsh-fs"
	// CMD starts in the session's workspace root, so that its relative
	// paths, the shell's and every dsh-fs call's, are the workspace's
	// (docs/design.md §10).
	child.Dir = startDir(s.settings.Policy)
	child.Env = append(s.childEnv(), "PWD="+child.Dir)
	child.Stdin, child.Stdout, child.Stderr = a.Stdin, a.Stdout, a.Stderr
	child.ExtraFiles = []*os.File{shellEnd, specR, errW}
	// CMD never holds the person's terminal: the child starts a new
	// session, without a controlling terminal, and the streams that
	// were a terminal are a pseudo-terminal of its own instead.
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// In the session's PID namespace, whose devpts is its own, the
	// child makes the session's terminal there, so it has a name
	// inside; elsewhere the supervisor makes it here.
	ownTerminal := s.rec.Shell.ProcessesHeld
	ctty := -1
	var terminal *childTerminal
	var handover *os.File
	if s.relay, err = openRelay(a, ownTerminal); err != nil {
		return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
	}
	if s.relay != nil {
		defer s.relay.Close()
		streams := giveTerminal(child, s.relay.Slave())
		if len(streams) > 0 {
			ctty = streams[0]
		}
		if ownTerminal && len(streams) > 0 {
			var childEnd *os.File
			if handover, childEnd, err = tty.NewHandover(); err != nil {
				return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
			}
			defer handover.Close()
			child.ExtraFiles = append(child.ExtraFiles, childEnd)
			terminal = &childTerminal{FD: 2 + len(child.ExtraFiles), Streams: streams, Modes: s.relay.Modes()}
		}
	}
	if s.nested && session.CheckBroker(brokerFD) == nil {
		// The outer session's channel stays where the shell has it;
		// without one, the shell gets a channel nobody answers.
		child.ExtraFiles[0] = os.NewFile(brokerFD, "broker")
	}
	spec := childSpec{Path: path, Argv: argv, Landlock: s.rec.Shell.Landlock > 0, Roots: s.rec.Roots, Sockets: s.sockets,
		Caches:       writableCaches(s.rec.Shell.Caches),
		Unprivileged: s.rec.Shell.Privileges != session.PrivilegesKept, Ctty: ctty, Terminal: terminal}
	// A planned mount layer brings the session's namespaces even when
	// it mounts nothing: the PID namespace and its /proc are the
	// processes layer's (processesLayer).
	if m := s.rec.Shell.Mounts; m != nil {
		spec.Mounts, spec.Empty = m, s.empty
		ns := mountNamespace()
		ns.Setsid, ns.Setctty, ns.Ctty = child.SysProcAttr.Setsid, child.SysProcAttr.Setctty, child.SysProcAttr.Ctty
		child.SysProcAttr = ns
	}
	spec.Init = s.rec.Shell.ProcessesHeld
	if spec.Network = s.rec.Shell.NetworkNamespaced; spec.Network {
		withNetworkNamespace(child.SysProcAttr)
		if s.settings.Policy.Network == sandbox.NetworkAllowlist && spec.Init {
			var stopProxy func()
			if spec.ProxyFD, stopProxy, err = s.startProxy(child); err != nil {
				return 0, fserr.Wrap(fserr.IO, "exec: network layer: "+err.Error(), err)
			}
			defer stopProxy()
		}
	}
	if s.rec.Shell.NetworkTCP {
		spec.TCPPorts = []int{}
		if s.settings.Policy.Network == sandbox.NetworkAllowlist {
			var stopProxy func()
			if spec.ProxyPort, stopProxy, err = s.startHostProxy(); err != nil {
				return 0, fserr.Wrap(fserr.IO, "exec: network layer: "+err.Error(), err)
			}
			defer stopProxy()
			spec.TCPPorts = []int{spec.ProxyPort}
		}
	}
	// Signals are forwarded from the start: one that arrives while CMD
	// runs is CMD's to act on.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	// A session never outlives its supervisor: killed with SIGKILL, the
	// supervisor can neither forward it nor end the session, so the
	// kernel kills the child as its parent dies, and with the child, the
	// init of the session's PID namespace, every process in it. The
	// parent-death signal follows the thread that forked the child, not
	// the process: this goroutine keeps its thread until the session
	// ends, and the Go runtime ends no thread a goroutine holds.
	child.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = child.Start()
	if s.relay != nil && s.relay.Slave() != nil {
		// The child holds the session's terminal now; only its
		// processes may, so the relay sees the session end.
		s.relay.Slave().Close()
	}
	shellEnd.Close()
	if err != nil {
		brokerEnd.Close()
	}
	specR.Close()
	errW.Close()
	for _, f := range child.ExtraFiles[childErrorFD-2:] {
		f.Close() // the proxy channel's bridge end is the session's alone
	}
	if err != nil {
		specW.Close()
		errR.Close()
		return 0, fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	json.NewEncoder(specW).Encode(spec)
	specW.Close()
	// The child's error pipe closes on its exec of CMD: anything read
	// before that is why the child could not become CMD.
	report, _ := io.ReadAll(errR)
	errR.Close()
	if len(report) > 0 {
		brokerEnd.Close()
		child.Wait()
		var f childFailure
		if json.Unmarshal(report, &f) != nil || f.Code == "" {
			f = childFailure{Code: fserr.IO, Message: strings.TrimSpace(string(report))}
		}
		return 0, fserr.New(f.Code, "exec: "+f.Message)
	}
	if handover != nil {
		master, err := tty.ReceiveTerminal(handover)
		if err != nil {
			child.Process.Kill()
			child.Wait()
			brokerEnd.Close()
			return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
		}
		s.relay.Attach(master)
	}
	if s.relay != nil {
		if err := s.relay.Start(); err != nil {
			child.Process.Kill()
			child.Wait()
			brokerEnd.Close()
			return 0, fserr.Wrap(fserr.IO, "exec: terminal: "+err.Error(), err)
		}
	}
	done, forwarding := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(forwarding)
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGWINCH && s.relay != nil {
					// The person's terminal was resized: the
					// session's follows, and the kernel tells CMD.
					s.relay.Resize()
					continue
				}
				child.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	stopBroker := func() { brokerEnd.Close() }
	if !s.nested {
		stopBroker = session.Serve(brokerEnd, s.run)
	}
	err = child.Wait()
	// The forwarder is gone before the relay closes: a resize in flight
	// would use the session's terminal as it is closed.
	close(done)
	<-forwarding
	stopBroker()
	if s.relay != nil {
		// CMD ended: what it wrote last reaches the person, and a
		// process left behind holding the session's terminal gets a
		// hang-up, never the person's terminal.
		s.relay.Close()
	}
	s.endGitGuard()
	return exitStatusOf(child.ProcessState, err), nil
}

// startDir is where CMD starts under p: the canonical workspace root
// (--cwd, else the folder exec was started from); in a nested session
// without a --cwd of its own, the shell's folder, which may lie beneath
// the root the outer session pinned.
func startDir(p sandbox.Policy) string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.Cwd
}

// sessionPrivileges is what CMD keeps of its privileges under p: in
// danger-full-access all of them (the harness asked for no sandbox);
// otherwise none, where the bounding set can be emptied (as root, or in
// the user namespace of the mount layer), else no_new_privs and no
// capability to use, the bounding set left as it is.
func sessionPrivileges(p sandbox.Policy, mounts bool) string {
	switch {
	case p.Mode == sandbox.DangerFullAccess:
		return session.PrivilegesKept
	case os.Geteuid() == 0 || mounts && sandbox.UserNamespace():
		return session.PrivilegesNone
	}
	return session.PrivilegesNoNewPrivs
}

// selfPidNS is this process's pid namespace (session.PidNamespace): a
// record's supervisor pid means something only there.
var selfPidNS = sync.OnceValue(func() uint64 {
	ns, _ := session.PidNamespace()
	return ns
})

// selfStart is this process's start time (session.StartTime), computed
// once: the record names its supervisor by pid and start.
var selfStart = sync.OnceValue(func() uint64 {
	start, _ := session.StartTime(os.Getpid())
	return start
})

// mountNamespace starts a child in a private mount namespace: as root
// directly; otherwise inside a new user namespace that maps this user,
// and only it, to itself (sandbox.UserNamespace).
//
// The child is also pid 1 of a new PID namespace (session.Init): when it
// exits, every process the session started goes with it.
func mountNamespace() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Cloneflags: syscall.CLONE_NEWPID}
	if sandbox.UserNamespace() {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// A user that is not root loses its capabilities in the new
		// namespace at its execve of dsh-fs: CAP_SYS_ADMIN is kept as an
		// ambient capability for the mounts, and the child clears it
		// before it becomes CMD (execChild).
		// CAP_SETPCAP lets it empty the bounding set and lock the
		// securebits before CMD (sandbox.DropPrivileges).
		// CAP_DAC_OVERRIDE is what an overlay's mount needs of its
		// mounter, whose credentials it keeps for its own work (its
		// work folder is mode 0); in a namespace that maps this user
		// alone it overrides nothing but on this user's own files.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
	}
	return attr
}

// userNamespaceProbeArg makes a dsh-fs process try, once, what the mount
// layer will do in a user namespace: mount. Some systems let anyone make
// a user namespace but deny it mounting (an LSM's policy); exec then
// says so rather than fail to start the session.
const userNamespaceProbeArg = "__userns-probe"

// probeUserNamespace reports whether a child in a user namespace can
// mount here; as root there is nothing to probe.
func probeUserNamespace(self string) error {
	if !sandbox.UserNamespace() {
		return nil
	}
	c := exec.Command(self, userNamespaceProbeArg)
	c.Args[0] = "dsh-fs"
	c.SysProcAttr = mountNamespace()
	out, err := c.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}

// userNamespaceProbe is the probe's whole life, in its private mount
// namespace, where nothing it mounts is seen outside.
func userNamespaceProbe() int {
	if err := unix.Mount("none", os.TempDir(), "tmpfs", 0, "size=4k"); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		return ExitFailed
	}
	if err := mountProc(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return ExitFailed
	}
	if err := tty.IsolateTerminals(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return ExitFailed
	}
	return ExitOK
}

// exitStatusOf is a process's exit status as a shell reports it: its own,
// or 128+N when signal N ended it.
func exitStatusOf(ps *os.ProcessState, err error) int {
	if ps == nil {
		return ExitFailed
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// childEnv is CMD's environment: exec's own, without the DSH_FS_*
// settings (folded into the record already) and any session variables it
// inherited, plus the record and the channel.
func (s *supervisor) childEnv() []string {
	if s.nested {
		// The outer record stays the base; this exec's flags narrow it
		// as variables, and its own variables pass as they are.
		return append(os.Environ(), s.settings.NarrowingEnv()...)
	}
	env := escalation.WithoutSessionVars(os.Environ())
	return append(env, session.Env+"="+s.record, fmt.Sprintf("%s=%d", session.BrokerEnv, brokerFD))
}

// execChild is the child's whole life: it reads the spec, mounts the
// mount layer (in the private namespace it was started in), restricts the
// process tree with Landlock, and becomes CMD. What fails is written to
// the error pipe, which exec turns into the failure result.
func execChild() int {
	// Capabilities are a thread's: DropPrivileges clears them on this
	// thread, and the execve of CMD must be made from the same one, or
	// CMD keeps what another thread still holds (CAP_SYS_ADMIN in its
	// user namespace, enough to unmount the mount layer).
	runtime.LockOSThread()
	report := os.NewFile(childErrorFD, "exec-error")
	unix.CloseOnExec(childErrorFD)
	fail := func(code fserr.Code, msg string) int {
		json.NewEncoder(report).Encode(childFailure{Code: code, Message: msg})
		return ExitFailed
	}
	specFile := os.NewFile(childSpecFD, "exec-spec")
	var spec childSpec
	err := json.NewDecoder(specFile).Decode(&spec)
	specFile.Close()
	if err != nil || len(spec.Argv) == 0 {
		return fail(fserr.InvalidArgument, "the child was not given a spec (it is started by dsh-fs exec only)")
	}
	if spec.Mounts != nil {
		if err := spec.Mounts.Apply(spec.Empty); err != nil {
			return fail(fserr.CodeOf(err), "mount layer: "+err.Error())
		}
	}
	env := os.Environ()
	if spec.Network {
		if err := sandbox.LoopbackUp(); err != nil {
			return fail(fserr.IO, "network layer: "+err.Error())
		}
	}
	if spec.ProxyFD > 0 {
		// Before the layers: the bridge's listener is this process's,
		// and its goroutine serves for the whole session (session.Init
		// runs on in this process).
		if env, err = startBridge(spec.ProxyFD, env); err != nil {
			return fail(fserr.IO, "network layer: "+err.Error())
		}
	}
	if spec.Init {
		if err := mountProc(); err != nil {
			return fail(fserr.IO, "processes layer: "+err.Error())
		}
		if err := tty.IsolateTerminals(); err != nil {
			return fail(fserr.IO, "terminal layer: "+err.Error())
		}
		if t := spec.Terminal; t != nil {
			sock := os.NewFile(uintptr(t.FD), "terminal-handover")
			master, err := tty.MakeTerminal(t.Modes, t.Streams)
			if err == nil {
				err = tty.Handover(sock, master)
			}
			if err != nil {
				return fail(fserr.IO, "terminal layer: "+err.Error())
			}
		}
	}
	if spec.Landlock {
		if err := sandbox.RestrictTree(append(spec.Roots, spec.Caches...)); err != nil {
			return fail(fserr.CodeOf(err), "kernel layer: "+err.Error())
		}
	}
	if spec.TCPPorts != nil {
		if err := sandbox.RestrictTCP(spec.TCPPorts); err != nil {
			return fail(fserr.CodeOf(err), "network layer: "+err.Error())
		}
		if spec.ProxyPort > 0 {
			env = netproxy.Env(env, spec.ProxyPort)
		}
	}
	if spec.Sockets != nil {
		if err := sandbox.RestrictSockets(spec.Sockets); err != nil {
			return fail(fserr.CodeOf(err), "socket layer: "+err.Error())
		}
	}
	// CMD keeps no capability, as root too, and can gain none.
	if spec.Unprivileged {
		if _, err := sandbox.DropPrivileges(); err != nil {
			return fail(fserr.IO, "privileges: "+err.Error())
		}
	}
	// Last, so nothing above needs what it refuses: no process of the
	// session may type into a terminal (TIOCSTI), whichever it reaches.
	if err := sandbox.RefuseTerminalInjection(); err != nil {
		return fail(fserr.CodeOf(err), "terminal layer: "+err.Error())
	}
	if spec.Init {
		status := session.Init(spec.Path, spec.Argv, env, spec.Ctty, func(err error) {
			if err != nil {
				fail(fserr.IO, spec.Argv[0]+": "+err.Error())
			}
			report.Close()
		})
		os.Exit(status)
	}
	err = unix.Exec(spec.Path, spec.Argv, env)
	return fail(fserr.IO, spec.Argv[0]+": "+err.Error())
}
