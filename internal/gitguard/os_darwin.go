package gitguard

import (
	"errors"

	"golang.org/x/sys/unix"
)

// macOS's calls for what every Unix does its own way (os_linux.go).

// dirHandle opens a folder to open names in: search permission only.
const dirHandle = unix.O_SEARCH

// ctimeClock is the clock to read the start from: macOS has no coarse
// one and stamps ctimes from the real-time clock.
const ctimeClock = unix.CLOCK_REALTIME

// renameNoReplace renames without replacing what is at to (EEXIST):
// renameatx_np's RENAME_EXCL.
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.RenameatxNp(fromfd, from, tofd, to, unix.RENAME_EXCL)
}

// openRegular opens the regular file name in the folder dirfd for
// reading, never following a symlink unless follow. macOS has no O_PATH:
// the name is looked at first and opened only if it is a regular file
// (so no device's or fifo's open runs unless one is swapped in between,
// and then O_NONBLOCK keeps a fifo from blocking), and what was opened
// must be the file looked at (device and inode).
func openRegular(dirfd int, name string, follow bool) (int, unix.Stat_t, error) {
	var st, opened unix.Stat_t
	flags, at := unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0
	if !follow {
		flags |= unix.O_NOFOLLOW
		at = unix.AT_SYMLINK_NOFOLLOW
	}
	if err := unix.Fstatat(dirfd, name, &st, at); err != nil {
		return -1, st, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, st, errors.New("not a regular file")
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return -1, st, err
	}
	if err := unix.Fstat(fd, &opened); err != nil || opened.Dev != st.Dev || opened.Ino != st.Ino {
		unix.Close(fd)
		return -1, st, errors.New("changed while it was opened")
	}
	return fd, opened, nil
}

// clearFlags clears nothing on macOS: its immutable and append-only
// flags (chflags uchg, uappnd, schg) are not read here yet, so a file
// or folder a session froze is reported as one the guard could not move.
func clearFlags(int, string) (bool, error) { return false, nil }
