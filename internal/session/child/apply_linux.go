package child

import (
	"net"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// Readied is what Apply made for a session and readied for its first
// process: the kernel layers that process installs on itself
// (rawinit.Layers), the session's terminal, and CMD's environment.
type Readied struct {
	Layers rawinit.Layers
	// Master and Slave are the session's terminal, made in its own
	// devpts; nil where the plan has none (plan.Terminal).
	Master, Slave *os.File
	// Env is CMD's environment: the plan's, or the caller's own, with
	// the bridge's proxy variables where the plan has a bridge.
	Env []string
}

// Close closes what r holds but the terminal's master, whose keeper is
// the caller: the rulesets and the slave, which the first process holds
// once it is started.
func (r Readied) Close() {
	for _, fd := range r.Layers.Rulesets {
		unix.Close(fd)
	}
	if r.Slave != nil {
		r.Slave.Close()
	}
}

// Apply applies p's namespace-wide part on the calling thread, which
// must be locked and in the session's namespaces (a private mount
// namespace, and a network one where p has it): the file view, the
// loopback, the bridge to the proxy (served by this process from now
// on), the session's devpts and its terminal. Then it readies the kernel
// layers (Landlock's rulesets, opened on the view just made, the
// capabilities to drop, the seccomp filters) without restricting
// anything. Its errors name the layer that failed, as the person reads
// them.
func Apply(p plan.Plan) (Readied, error) {
	r := Readied{Env: p.Env}
	if r.Env == nil {
		r.Env = os.Environ()
	}
	fail := func(code fserr.Code, layer string, err error) (Readied, error) {
		r.Close()
		if r.Master != nil {
			r.Master.Close()
		}
		return Readied{}, fserr.Wrap(code, layer+": "+err.Error(), err)
	}
	if p.Files != nil {
		if err := (applier{}).applyFiles(p.Files, p.EmptyFile); err != nil {
			return fail(fserr.CodeOf(err), "mount layer", err)
		}
	}
	mark("child-mounts")
	if p.Network {
		if err := kernel.LoopbackUp(); err != nil {
			return fail(fserr.IO, "network layer", err)
		}
	}
	if p.ProxyFD > 0 {
		env, err := startBridge(p.ProxyFD, r.Env)
		if err != nil {
			return fail(fserr.IO, "network layer", err)
		}
		r.Env = env
	}
	if p.Init {
		if err := tty.IsolateTerminals(); err != nil {
			return fail(fserr.IO, "terminal layer", err)
		}
		if t := p.Terminal; t != nil {
			var err error
			if r.Master, r.Slave, err = tty.OpenTerminal(t.Modes); err != nil {
				return fail(fserr.IO, "terminal layer", err)
			}
		}
	}
	mark("child-network-init")
	layers, err := readyLayers(p, nil)
	r.Layers = layers
	if err != nil {
		r.Close()
		if r.Master != nil {
			r.Master.Close()
		}
		return Readied{}, err
	}
	return r, nil
}

// readyLayers readies p's kernel layers as rawinit installs them, in
// its order: the session keyring, the write restriction and the socket
// rules (each a Landlock ruleset of its own, so each holds alone), the
// privileges dropped, last the seccomp filters. Its error names the
// layer; what it readied before is in the returned Layers, to close.
//
// writes, when not nil, makes the write restriction's ruleset instead
// of writesRuleset: the first process then adds what only its own mounts
// make (compileWrites).
func readyLayers(p plan.Plan, writes func() (int, error)) (rawinit.Layers, error) {
	l := rawinit.Layers{JoinKeyring: true}
	layerErr := func(layer string, err error) (rawinit.Layers, error) {
		return l, fserr.Wrap(fserr.CodeOf(err), layer+": "+err.Error(), err)
	}
	if writes == nil {
		writes = func() (int, error) { return writesRuleset(append(slices.Clip(p.Writable), p.Caches...)) }
	}
	if p.RestrictWrites {
		fd, err := writes()
		if err != nil {
			return layerErr("kernel layer", err)
		}
		l.Rulesets = append(l.Rulesets, fd)
	}
	if p.Sockets != nil {
		fd, err := kernel.SocketsRuleset(p.Sockets)
		if err != nil {
			return layerErr("socket layer", err)
		}
		l.Rulesets = append(l.Rulesets, fd)
	}
	if p.Unprivileged {
		drop, err := kernel.PrivilegesToDrop()
		if err != nil {
			return layerErr("privileges", err)
		}
		l.DropPrivileges = &rawinit.Privileges{LastCap: drop.LastCap}
	}
	terminal, err := kernel.TerminalInjectionFilters()
	if err != nil {
		return layerErr("terminal layer", err)
	}
	calls, err := kernel.SessionCallsFilters(p.Linux.IoUring)
	if err != nil {
		return layerErr("kernel calls", err)
	}
	l.Filters = append(terminal, calls...)
	return l, nil
}

// Start starts the session's first process from the calling thread,
// the one Apply ran on, with r's layers: CMD of p, in dir, with files as
// its descriptors 0 to len(files)-1 (the terminal's slave in place of
// each of p.Terminal's streams). It returns once CMD runs, or with why
// it could not.
func Start(p plan.Plan, r Readied, dir string, files []int) (*rawinit.Process, error) {
	files = slices.Clone(files)
	if t := p.Terminal; t != nil && r.Slave != nil {
		for _, fd := range t.Streams {
			files[fd] = int(r.Slave.Fd())
		}
	}
	return rawinit.Start(rawinit.Spec{
		Init: p.Init, MountProc: p.Init, Session: true, Ctty: p.Ctty, ParentDeath: syscall.SIGKILL,
		Layers: r.Layers,
		Path:   p.Path, Argv: p.Argv, Env: r.Env, Dir: dir, Files: files,
	})
}

// startBridge starts, in the session's network namespace, the bridge
// from a loopback port to the proxy's channel at fd, served by this
// process, and returns CMD's environment env naming that port.
func startBridge(fd int, env []string) ([]string, error) {
	// CMD and what it starts never hold the channel.
	unix.CloseOnExec(fd)
	l, err := bridge.Listen()
	if err != nil {
		return nil, err
	}
	go bridge.Bridge(l, os.NewFile(uintptr(fd), "proxy-channel"))
	return bridge.Env(env, l.Addr().(*net.TCPAddr).Port), nil
}
