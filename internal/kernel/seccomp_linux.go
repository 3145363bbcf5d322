package kernel

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// terminalInjection are the ioctl requests that put bytes into a
// terminal's input as if typed (TIOCSTI), or drive the console (TIOCLINUX:
// paste the selection, among others). A session's tree never needs them,
// and with them it could type into the person's terminal: answer the
// supervisor's question, or run a command line in the person's shell.
var terminalInjection = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// TerminalInjectionFilters readies the seccomp programs of the terminal
// layer, in the order a thread installs them, installing nothing: the
// native one refuses, with EPERM, every ioctl of terminalInjection,
// matching the request's low 32 bits as the kernel reads it
// (CVE-2019-10063's high bits change nothing), and refuses x32 whole
// (lowWordRule.program); where compatArch knows the 32-bit ABI of a
// 64-bit kernel, a second program refuses the same ioctls there
// (compatProgram).
func TerminalInjectionFilters() ([][]unix.SockFilter, error) {
	arch, ok := nativeSeccompArch()
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for architecture %s", runtime.GOARCH)
	}
	rule := lowWordRule{syscall: unix.SYS_IOCTL, arg: 1, values: terminalInjection, errno: unix.EPERM}
	prog, err := rule.program(arch)
	if err != nil {
		return nil, err
	}
	progs := [][]unix.SockFilter{prog}
	if compat, nr, ok := compatArch(); ok {
		prog, err := compatProgram(compat, nr)
		if err != nil {
			return nil, fmt.Errorf("32-bit ABI: %w", err)
		}
		progs = append(progs, prog)
	}
	return progs, nil
}

// compatArch is the 32-bit ABI a 64-bit kernel of this architecture may
// also run, by its audit arch, and that ABI's ioctl number; ok is false
// where there is none this filter knows.
func compatArch() (arch, ioctl uint32, ok bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_I386, 54, true
	case "arm64":
		return unix.AUDIT_ARCH_ARM, 54, true
	}
	return 0, 0, false
}

// compatProgram is the terminal layer's filter for the 32-bit ABI arch
// (a 32-bit program the session brought along, which the native filter,
// bound to one architecture, lets through),
// whose ioctl is nr: another ABI, or another call, is allowed; an ioctl
// whose request (a 32-bit argument there, its low word) is one of
// terminalInjection is refused with EPERM.
func compatProgram(arch, nr uint32) ([]unix.SockFilter, error) {
	a := newBPFAsm()
	allow, refuse := a.newLabel(), a.newLabel()
	a.load(seccompArchAt)
	a.jump(unix.BPF_JEQ, arch, a.fallThrough(), allow)
	a.load(seccompNrAt)
	a.jump(unix.BPF_JEQ, nr, a.fallThrough(), allow)
	a.load(lowWordRule{arg: 1}.argAt(true))
	for _, req := range terminalInjection {
		a.jump(unix.BPF_JEQ, req, refuse, a.fallThrough())
	}
	a.place(allow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.place(refuse)
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	return a.assemble()
}
