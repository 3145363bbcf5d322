package race

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b in the folder dirfd, atomically.
func exchange(dirfd int, a, b string) error {
	return unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
}

// dieWithParent starts a helper process that the kernel kills when this
// test process dies (PR_SET_PDEATHSIG).
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
