package shell

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
	"github.com/dshfs/dsh-fs/internal/tty"
	"golang.org/x/sys/unix"
)

// childSpec is what the child applies before it becomes CMD.
type childSpec struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Env is CMD's environment; without it, the child's own.
	Env      []string           `json:"env"`
	Landlock bool               `json:"landlock"`
	Roots    []string           `json:"roots"`
	Mounts   *sandbox.MountPlan `json:"mounts"`
	// Unprivileged says CMD runs with no capability and no_new_privs
	// (kernel.DropPrivileges).
	Unprivileged bool   `json:"unprivileged"`
	Empty        string `json:"empty"`
	// Caches are the toolchain caches the kernel layer grants besides
	// Roots (writableCaches).
	Caches []string `json:"caches"`
	// Sockets, when not nil, are the grants of the Landlock socket
	// layer (kernel.RestrictSockets).
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
	// Terminal, when not nil, has the child make the session's terminal
	// in the session's own devpts (tty.MakeTerminal) and hand its master
	// to the supervisor.
	Terminal *childTerminal `json:"terminal,omitempty"`
	// IoUring leaves io_uring's calls to CMD (allow_io_uring); the
	// keyrings' are refused always (kernel.RefuseSessionCalls).
	IoUring bool `json:"io_uring"`
	// EndedFD, when not 0, is the descriptor of the pipe the child, as
	// the session's init, tells the supervisor CMD's exit status on once
	// every process of the session ended (reportEnded).
	EndedFD int `json:"ended_fd"`
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
	sigs := initSignals()
	report := os.NewFile(childErrorFD, "exec-error")
	unix.CloseOnExec(childErrorFD)
	fail := func(code fserr.Code, msg string) int {
		json.NewEncoder(report).Encode(childFailure{Code: code, Message: msg})
		return statusFailed
	}
	spec, ok := readSpec()
	if !ok {
		return fail(fserr.InvalidArgument, "the child was not given a spec (it is started by dsh-fs exec only)")
	}
	// The keyring exec was started in is the person's: the session gets
	// an empty one of its own.
	if err := kernel.JoinSessionKeyring(); err != nil {
		return fail(fserr.CodeOf(err), err.Error())
	}
	if spec.Mounts != nil {
		if err := spec.Mounts.Apply(spec.Empty); err != nil {
			return fail(fserr.CodeOf(err), "mount layer: "+err.Error())
		}
	}
	mark("child-mounts")
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	if spec.Network {
		if err := kernel.LoopbackUp(); err != nil {
			return fail(fserr.IO, "network layer: "+err.Error())
		}
	}
	if spec.ProxyFD > 0 {
		// Before the layers: the bridge's listener is this process's,
		// and its goroutine serves for the whole session (session.Init
		// runs on in this process).
		var err error
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
	mark("child-network-init")
	if spec.Landlock {
		if err := sandbox.RestrictTree(append(spec.Roots, spec.Caches...)); err != nil {
			return fail(fserr.CodeOf(err), "kernel layer: "+err.Error())
		}
	}
	if spec.Sockets != nil {
		if err := kernel.RestrictSockets(spec.Sockets); err != nil {
			return fail(fserr.CodeOf(err), "socket layer: "+err.Error())
		}
	}
	// CMD keeps no capability, as root too, and can gain none.
	if spec.Unprivileged {
		if _, err := kernel.DropPrivileges(); err != nil {
			return fail(fserr.IO, "privileges: "+err.Error())
		}
	}
	// Last, so nothing above needs what they refuse: the seccomp
	// filters (refuseCalls).
	if layer, err := refuseCalls(spec.IoUring); err != nil {
		return fail(fserr.CodeOf(err), layer+": "+err.Error())
	}
	mark("child-layers")
	if spec.Init {
		os.Exit(runInit(spec, env, sigs, func(err error) {
			if err != nil {
				fail(fserr.IO, spec.Argv[0]+": "+err.Error())
			}
			report.Close()
		}))
	}
	err := unix.Exec(spec.Path, spec.Argv, env)
	return fail(fserr.IO, spec.Argv[0]+": "+err.Error())
}

// initSignals catches the signals the first process of the session's
// PID namespace (spec.Init) passes on, while it readies the layers
// (session.CatchSignals); nil in any other child.
func initSignals() *session.Signals {
	if os.Getpid() != 1 {
		return nil
	}
	return session.CatchSignals()
}

// readSpec reads the child's spec on childSpecFD: false where there is
// none. The descriptor it names for the session's end is the
// supervisor's alone, closed on CMD's exec.
func readSpec() (childSpec, bool) {
	specFile := os.NewFile(childSpecFD, "exec-spec")
	var spec childSpec
	err := json.NewDecoder(specFile).Decode(&spec)
	specFile.Close()
	if err != nil || len(spec.Argv) == 0 {
		return spec, false
	}
	if spec.EndedFD > 0 {
		unix.CloseOnExec(spec.EndedFD)
	}
	return spec, true
}

// runInit runs CMD of spec, with env, as the session's init
// (session.Init), whose signals sigs are, and returns its exit status
// once it reported the session's end (reportEnded); started is
// session.Init's.
func runInit(spec childSpec, env []string, sigs *session.Signals, started func(error)) int {
	status, ended := session.Init(spec.Path, spec.Argv, env, spec.Ctty, sigs, started)
	if ended {
		reportEnded(spec.EndedFD, status)
	}
	return status
}

// reportEnded tells the supervisor, on the pipe at fd, that the session
// ended with CMD's exit status: the supervisor's end of the session (the
// git guard) then runs while the kernel tears down the namespaces as
// this process exits. Its own standard streams are closed first: the
// session's terminal is then closed by all, and the relay drains it.
func reportEnded(fd, status int) {
	if fd <= 0 {
		return
	}
	for i := range 3 {
		unix.Close(i)
	}
	unix.Write(fd, []byte(strconv.Itoa(status)))
	unix.Close(fd)
}

// refuseCalls installs the seccomp filters of the session: no input
// pushed into a terminal, no keyring of the person's and, unless
// ioUring, no io_uring, whose operations skip the calls the other layers
// watch. It names the layer that could not be installed.
func refuseCalls(ioUring bool) (string, error) {
	if err := kernel.RefuseTerminalInjection(); err != nil {
		return "terminal layer", err
	}
	if err := kernel.RefuseSessionCalls(ioUring); err != nil {
		return "kernel calls", err
	}
	return "", nil
}
