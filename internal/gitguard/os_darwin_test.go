package gitguard

import "golang.org/x/sys/unix"

// exchange swaps the objects at a and b atomically (RENAME_SWAP).
func exchange(a, b string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_SWAP)
}

// haveSetfsuid is false: macOS has no thread file-access uid.
const haveSetfsuid = false

func setFsuid(int) {}
