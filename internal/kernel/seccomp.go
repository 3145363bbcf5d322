package kernel

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// terminalInjection are the ioctl requests that put bytes into a
// terminal's input as if typed (TIOCSTI), or drive the console (TIOCLINUX:
// paste the selection, among others). A session's tree never needs them,
// and with them it could type into the person's terminal: answer the
// supervisor's question, or run a command line in the person's shell.
var terminalInjection = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// RefuseTerminalInjection sets no_new_privs on the calling thread and
// installs a seccomp filter there refusing, with EPERM, every ioctl of
// terminalInjection, whatever the terminal and the caller's privilege;
// it is inherited and cannot be lifted, so exec's child calls it from the
// thread that starts CMD. The filter matches the request's low 32 bits,
// as the kernel reads it (CVE-2019-10063's high bits change nothing); the
// 32-bit ABI of a 64-bit kernel gets a second filter of the same rule,
// and x32 is refused whole (lowWordRule.program).
func RefuseTerminalInjection() error {
	rule := lowWordRule{syscall: unix.SYS_IOCTL, arg: 1, values: terminalInjection, errno: unix.EPERM}
	if err := rule.install(); err != nil {
		return fserr.Wrap(fserr.IO, "seccomp: "+err.Error(), err)
	}
	if err := loadCompatFilter(); err != nil {
		return fserr.Wrap(fserr.IO, "seccomp (32-bit ABI): "+err.Error(), err)
	}
	return nil
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

// loadCompatFilter refuses the terminalInjection ioctls made through the
// 32-bit ABI (a 32-bit program the session brought along), which the
// native filter, bound to one architecture, lets through.
func loadCompatFilter() error {
	arch, nr, ok := compatArch()
	if !ok {
		return nil
	}
	prog, err := compatProgram(arch, nr)
	if err != nil {
		return err
	}
	return loadSeccomp(prog)
}

// compatProgram is loadCompatFilter's filter for the 32-bit ABI arch,
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
