//go:build unix

package kept

import (
	"os"

	"golang.org/x/sys/unix"
)

// openPrivate opens a file of kept answers and returns its size: never
// through a symlink, and only a regular file of this user's that nobody
// else may read or write, no larger than maxBytes.
func openPrivate(path string) (*os.File, int64, bool) {
	fd, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(int(fd.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() ||
		st.Mode&0o077 != 0 || st.Size > maxBytes {
		fd.Close()
		return nil, 0, false
	}
	return fd, st.Size, true
}

// lockFile opens path, never through a symlink, and holds an exclusive
// lock of it until it is closed.
func lockFile(path string) (*os.File, error) {
	lock, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}
