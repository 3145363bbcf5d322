// Package child is the applier of a dsh-fs exec session's plan
// (internal/session/plan), on the thread that starts the session: it
// applies the plan's namespace-wide part there (Apply: the file view,
// the network, the terminal), readies the kernel layers, and forks the
// session's first process (Start, internal/session/rawinit), which
// installs them on itself and runs CMD. The supervisor calls it on a
// thread of its own; where the session needs a user namespace, which a
// thread may not take, the first process does that part itself with
// compiled system calls (StartInUserNamespace), or, where those cannot
// make its mounts, the supervisor's child process does (Run). It
// knows no policy:
// it never imports the policy's vocabulary, the fence or the config
// (e2e/repo's TestChildKnowsNoPolicy).
package child

import (
	"encoding/json"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
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

// Run is the life of the session's child, which dsh-fs exec starts for
// an ordinary user's mount layer that StartInUserNamespace cannot make
// (CompileFiles refuses it): it reads the plan,
// applies it (Apply) on its one locked thread, hands the terminal's
// master to the supervisor, and starts the session's first process
// (Start). It then passes exec's signals on, serves the bridge to the
// proxy, and reports the session's end as the first process tells it.
// What fails before CMD runs is written to the error pipe, which exec
// turns into the failure result.
func Run() int {
	// The namespaces and the mounts are this thread's to hand on: the
	// first process is forked from it.
	runtime.LockOSThread()
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
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, InitSignals...)
	r, err := Apply(spec)
	if err != nil {
		return fail(fserr.CodeOf(err), err.Error())
	}
	defer r.Close()
	if t := spec.Terminal; t != nil && r.Master != nil {
		if err := tty.Handover(os.NewFile(uintptr(t.FD), "terminal-handover"), r.Master); err != nil {
			return fail(fserr.IO, "terminal layer: "+err.Error())
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(fserr.IO, "the working folder: "+err.Error())
	}
	proc, err := Start(spec, r, wd, []int{0, 1, 2, BrokerFD})
	if err != nil {
		return fail(fserr.CodeOf(err), err.Error())
	}
	r.Close()
	report.Close()
	// The child's own streams are the session's terminal, or exec's:
	// held here, the relay would never see the session end.
	for i := range 3 {
		unix.Close(i)
	}
	return waitFirst(proc, sigs, spec.EndedFD)
}

// waitFirst passes sigs on to the session's first process proc until it
// ends, and returns CMD's exit status; once the first process said every
// process of the session ended, so is the supervisor told, on endedFD.
func waitFirst(proc *rawinit.Process, sigs chan os.Signal, endedFD int) int {
	type end struct {
		status int
		ended  bool
	}
	done := make(chan end, 1)
	go func() {
		status, ended, _ := proc.Wait()
		done <- end{status, ended}
	}()
	for {
		select {
		case sig := <-sigs:
			proc.Signal(sig.(syscall.Signal))
		case e := <-done:
			if e.ended {
				reportEnded(endedFD, e.status)
			}
			return e.status
		}
	}
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
