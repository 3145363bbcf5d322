// Package child is the applier inside a dsh-fs exec session: the
// session's first process, started by the supervisor, reads the plan
// (internal/session/plan) on SpecFD, applies it to itself (the
// mounts, the network, the terminal, the write restriction, the
// privileges, the system call filters) and becomes CMD, or stays the
// session's init and starts it. It knows no policy: it never imports
// the policy's vocabulary, the fence or the config (e2e/repo's
// TestChildKnowsNoPolicy).
package child

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// Failure is what the child reports on ErrorFD when it could not become
// CMD.
type Failure struct {
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
}

// The child's inherited descriptors: the shell keeps the broker, the
// others are the child's alone.
const (
	BrokerFD = 3
	SpecFD   = 4
	ErrorFD  = 5
)

// statusFailed is the child's exit status when it could not become CMD.
const statusFailed = 1

// Run is the child's whole life: it reads the plan, applies it (the
// mounts in the private namespaces it was started in, the write
// restriction on the whole process tree, last the system call filters),
// and becomes CMD. What fails is written to the error pipe, which exec
// turns into the failure result.
func Run() int {
	// Capabilities are a thread's: DropPrivileges clears them on this
	// thread, and the execve of CMD must be made from the same one, or
	// CMD keeps what another thread still holds (CAP_SYS_ADMIN in its
	// user namespace, enough to unmount the mount layer).
	runtime.LockOSThread()
	sigs := initSignals()
	report := os.NewFile(ErrorFD, "exec-error")
	unix.CloseOnExec(ErrorFD)
	fail := func(code fserr.Code, msg string) int {
		json.NewEncoder(report).Encode(Failure{Code: code, Message: msg})
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
	if spec.Files != nil {
		if err := (applier{}).applyFiles(spec.Files, spec.EmptyFile); err != nil {
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
		// and its goroutine serves for the whole session (Init
		// runs on in this process).
		var err error
		if env, err = startBridge(spec.ProxyFD, env); err != nil {
			return fail(fserr.IO, "network layer: "+err.Error())
		}
	}
	if spec.Init {
		if err := MountProc(); err != nil {
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
	if spec.RestrictWrites {
		if err := restrictWrites(append(spec.Writable, spec.Caches...)); err != nil {
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
	if layer, err := refuseCalls(spec.Linux.IoUring); err != nil {
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
// (CatchSignals); nil in any other child.
func initSignals() *Signals {
	if os.Getpid() != 1 {
		return nil
	}
	return CatchSignals()
}

// readSpec reads the child's plan on SpecFD: false where there is
// none. The descriptor it names for the session's end is the
// supervisor's alone, closed on CMD's exec.
func readSpec() (plan.Plan, bool) {
	specFile := os.NewFile(SpecFD, "exec-spec")
	var spec plan.Plan
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
// (Init), whose signals sigs are, and returns its exit status
// once it reported the session's end (reportEnded); started is
// Init's.
func runInit(spec plan.Plan, env []string, sigs *Signals, started func(error)) int {
	status, ended := Init(spec.Path, spec.Argv, env, spec.Ctty, sigs, started)
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
