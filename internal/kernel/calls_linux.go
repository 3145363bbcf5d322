package kernel

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// keyringCalls are the system calls of the kernel's keyrings. Keyrings
// are not a namespace of their own: the user keyring (@u) is shared by
// every process of a uid, and a session keyring by every process that
// inherited it, so a session with these calls reads what the person's
// other programs keep there (a Kerberos KEYRING: cache, a helper's
// tokens). No session needs them: they are refused always, as container
// runtimes refuse them by default.
var keyringCalls = []uint32{unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL}

// ioUringCalls are io_uring's system calls. Its operations open files,
// make sockets and connect them without open(2), socket(2) or
// connect(2), past what the seccomp filters of the other layers watch;
// container runtimes refuse it by default.
var ioUringCalls = []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}

// compatCalls is the same call in the 32-bit ABI a 64-bit kernel of
// this architecture may also run (compatArch), by its number there;
// built when a filter is, not at every start.
var compatCalls = sync.OnceValue(func() map[string]map[uint32]uint32 {
	return map[string]map[uint32]uint32{
		"amd64": {unix.SYS_ADD_KEY: 286, unix.SYS_REQUEST_KEY: 287, unix.SYS_KEYCTL: 288,
			unix.SYS_IO_URING_SETUP: 425, unix.SYS_IO_URING_ENTER: 426, unix.SYS_IO_URING_REGISTER: 427},
		"arm64": {unix.SYS_ADD_KEY: 309, unix.SYS_REQUEST_KEY: 310, unix.SYS_KEYCTL: 311,
			unix.SYS_IO_URING_SETUP: 425, unix.SYS_IO_URING_ENTER: 426, unix.SYS_IO_URING_REGISTER: 427},
	}
})

// SessionCallsFilters readies the seccomp program of the session's
// calls, installing nothing: one program that refuses with EPERM the
// keyring calls, and io_uring's unless ioUring, on the native ABI and on
// the 32-bit one of a 64-bit kernel (refuseCallsProgram).
func SessionCallsFilters(ioUring bool) ([][]unix.SockFilter, error) {
	calls := append([]uint32{}, keyringCalls...)
	if !ioUring {
		calls = append(calls, ioUringCalls...)
	}
	arch, ok := nativeSeccompArch()
	if !ok {
		return nil, fserr.New(fserr.IO, "seccomp: no filter for architecture "+runtime.GOARCH)
	}
	prog, err := refuseCallsProgram(arch, calls)
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "seccomp: keyrings and io_uring: "+err.Error(), err)
	}
	return [][]unix.SockFilter{prog}, nil
}

// refuseCallsProgram is SessionCallsFilters' program for arch: each of
// calls is refused with EPERM, by its native number
// and, where compatArch knows the 32-bit ABI, by its number there; on
// amd64 the x32 ABI is refused whole with ENOSYS; any other call, or
// another architecture, is allowed.
func refuseCallsProgram(arch seccompArch, calls []uint32) ([]unix.SockFilter, error) {
	a := newBPFAsm()
	allow, refuse, native := a.newLabel(), a.newLabel(), a.newLabel()
	compat, _, hasCompat := compatArch()
	a.load(seccompArchAt)
	if hasCompat {
		other := a.newLabel()
		a.jump(unix.BPF_JEQ, arch.audit, native, other)
		a.place(other)
		a.jump(unix.BPF_JEQ, compat, a.fallThrough(), allow)
		a.load(seccompNrAt)
		for _, nr := range calls {
			if c, ok := compatCalls()[runtime.GOARCH][nr]; ok {
				a.jump(unix.BPF_JEQ, c, refuse, a.fallThrough())
			}
		}
		a.ret(unix.SECCOMP_RET_ALLOW)
	} else {
		a.jump(unix.BPF_JEQ, arch.audit, native, allow)
	}
	a.place(native)
	a.load(seccompNrAt)
	if arch.amd64 {
		notX32 := a.newLabel()
		a.jump(unix.BPF_JGE, x32SyscallBit, a.fallThrough(), notX32)
		a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
		a.place(notX32)
	}
	for _, nr := range calls {
		a.jump(unix.BPF_JEQ, nr, refuse, a.fallThrough())
	}
	a.place(allow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.place(refuse)
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	return a.assemble()
}
