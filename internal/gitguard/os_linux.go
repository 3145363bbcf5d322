package gitguard

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Linux's calls for what every Unix does its own way (os_darwin.go).

// dirHandle opens a folder as a handle, to open names in.
const dirHandle = unix.O_PATH | unix.O_DIRECTORY

// ctimeClock is the clock the kernel stamps ctimes from: the coarse one,
// so a start read from it is never after a ctime stamped later.
const ctimeClock = unix.CLOCK_REALTIME_COARSE

// renameNoReplace renames without replacing what is at to (EEXIST).
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.Renameat2(fromfd, from, tofd, to, unix.RENAME_NOREPLACE)
}

// openRegular opens the regular file name in the folder dirfd for
// reading, never following a symlink unless follow: it is first opened
// O_PATH, which runs no device's or fifo's open, checked to be a regular
// file, and only then opened for reading through that descriptor.
func openRegular(dirfd int, name string, follow bool) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	pfd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return -1, st, err
	}
	defer unix.Close(pfd)
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, st, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, st, errors.New("not a regular file")
	}
	fd, err := reopen(pfd)
	return fd, st, err
}

// reopen opens the object of the O_PATH handle pfd for reading.
func reopen(pfd int) (int, error) {
	return unix.Open(fmt.Sprintf("/proc/self/fd/%d", pfd), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// The inode flags that stop the guard from moving what a session planted:
// an immutable or append-only git directory, config or hook cannot be
// renamed or written. A session that kept CAP_LINUX_IMMUTABLE could set
// them; the guard, as root, clears them again on what it must change
// (linux/fs.h: FS_IMMUTABLE_FL, FS_APPEND_FL).
const (
	immutableFlag = 0x10
	appendFlag    = 0x20
)

// clearFlags is unfreeze's work: it clears those flags on name of dirfd
// ("" for dirfd itself).
func clearFlags(dirfd int, name string) (bool, error) {
	fd := dirfd
	if name != "" {
		pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, nil // not there: nothing to clear
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if unix.Fstat(pfd, &st) != nil {
			return false, nil
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
			return false, nil // a symlink or special file carries no flags to clear here
		}
		if fd, err = reopen(pfd); err != nil {
			return false, err
		}
		defer unix.Close(fd)
	}
	flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&(immutableFlag|appendFlag) == 0 {
		return false, nil // a file system without flags has none set
	}
	if err := unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, flags&^(immutableFlag|appendFlag)); err != nil {
		return false, err
	}
	return true, nil
}
