package gitguard

import "golang.org/x/sys/unix"

// exchange swaps the objects at a and b atomically (RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// haveSetfsuid: setFsuid works here.
const haveSetfsuid = true

// setFsuid makes the calling thread check file access as uid.
func setFsuid(uid int) { unix.Setfsuid(uid) }
