//go:build !amd64 && !arm64

package rawinit

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// rawVfork, on an architecture without its assembly, forks a copy:
// the child then owns its memory, as a plain fork's does.
//
//go:nosplit
//go:norace
//go:nocheckptr
func rawVfork(flags uintptr) (pid, errno uintptr) {
	pid, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, flags&^(unix.CLONE_VM|unix.CLONE_VFORK), 0, 0, 0, 0, 0)
	return pid, uintptr(e)
}
