package gitguard

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The inode flags that stop the guard from moving what a session planted:
// an immutable or append-only git directory, config or hook cannot be
// renamed or written. A session that kept CAP_LINUX_IMMUTABLE could set
// them; the guard, as root, clears them again on what it must change
// (linux/fs.h: FS_IMMUTABLE_FL, FS_APPEND_FL).
const (
	immutableFlag = 0x10
	appendFlag    = 0x20
)

// unfreeze clears the immutable and append-only flags of the entry name
// of the folder dirfd ("" for dirfd itself), where this process is root
// and they are set, and reports whether it cleared any. It never follows
// a symlink and opens nothing but a regular file or a folder.
func unfreeze(dirfd int, name string) (bool, error) {
	if os.Geteuid() != 0 {
		return false, nil
	}
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
		if fd, err = unix.Open(fmt.Sprintf("/proc/self/fd/%d", pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err != nil {
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
