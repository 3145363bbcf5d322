package toolchains

import (
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// resolvedIdentity is the resolved path of the file at p and its
// identity (statIdentity's), found through one descriptor: opened
// following symlinks (O_PATH reads nothing and needs no read right), its
// path read back from /proc/self/fd, then looked at. Three system calls,
// one for a file that is not there, where resolving by path takes an
// lstat per component (evalIdentity): the key is made at every start,
// and the plan waits for it. Where /proc cannot say, it resolves by path.
func resolvedIdentity(p string) (real, id string, err error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", "", &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", "", &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' {
		return evalIdentity(p)
	}
	return string(buf[:n]), identityOf(&st), nil
}
