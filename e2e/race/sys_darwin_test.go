package race

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b in the folder dirfd, atomically
// (renameatx_np RENAME_SWAP).
func exchange(dirfd int, a, b string) error {
	return unix.RenameatxNp(dirfd, a, dirfd, b, unix.RENAME_SWAP)
}

// dieWithParent has no parent-death signal to ask for on macOS: a helper
// ends at its own deadline (envRaceUntil) should this process die.
func dieWithParent() *syscall.SysProcAttr { return nil }
