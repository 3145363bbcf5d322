//go:build unix

package fsys

import "golang.org/x/sys/unix"

// Stat_t is x/sys/unix's.
type Stat_t = unix.Stat_t

// Errno is a system call's error number.
type Errno = unix.Errno

// The flags, modes and errors the fence uses, x/sys/unix's values.
const (
	AT_EACCESS          = unix.AT_EACCESS
	AT_FDCWD            = unix.AT_FDCWD
	AT_REMOVEDIR        = unix.AT_REMOVEDIR
	AT_SYMLINK_NOFOLLOW = unix.AT_SYMLINK_NOFOLLOW

	DT_DIR     = unix.DT_DIR
	DT_LNK     = unix.DT_LNK
	DT_REG     = unix.DT_REG
	DT_UNKNOWN = unix.DT_UNKNOWN
	DT_SOCK    = unix.DT_SOCK

	LOCK_EX = unix.LOCK_EX
	W_OK    = unix.W_OK

	O_CLOEXEC   = unix.O_CLOEXEC
	O_CREAT     = unix.O_CREAT
	O_DIRECTORY = unix.O_DIRECTORY
	O_EXCL      = unix.O_EXCL
	O_NOCTTY    = unix.O_NOCTTY
	O_NOFOLLOW  = unix.O_NOFOLLOW
	O_NONBLOCK  = unix.O_NONBLOCK
	O_RDONLY    = unix.O_RDONLY
	O_RDWR      = unix.O_RDWR
	O_WRONLY    = unix.O_WRONLY

	S_IFBLK  = unix.S_IFBLK
	S_IFCHR  = unix.S_IFCHR
	S_IFDIR  = unix.S_IFDIR
	S_IFIFO  = unix.S_IFIFO
	S_IFLNK  = unix.S_IFLNK
	S_IFMT   = unix.S_IFMT
	S_IFREG  = unix.S_IFREG
	S_IFSOCK = unix.S_IFSOCK
	S_ISGID  = unix.S_ISGID
	S_ISUID  = unix.S_ISUID
	S_ISVTX  = unix.S_ISVTX

	PathMax = unix.PathMax

	EACCES       = unix.EACCES
	EAGAIN       = unix.EAGAIN
	EBADF        = unix.EBADF
	EBUSY        = unix.EBUSY
	EEXIST       = unix.EEXIST
	EINTR        = unix.EINTR
	EINVAL       = unix.EINVAL
	EIO          = unix.EIO
	ELOOP        = unix.ELOOP
	ENAMETOOLONG = unix.ENAMETOOLONG
	ENOENT       = unix.ENOENT
	ENOSYS       = unix.ENOSYS
	ENOTDIR      = unix.ENOTDIR
	ENOTEMPTY    = unix.ENOTEMPTY
	ENOTSUP      = unix.ENOTSUP
	EOPNOTSUPP   = unix.EOPNOTSUPP
	EPERM        = unix.EPERM
	EROFS        = unix.EROFS
	ETXTBSY      = unix.ETXTBSY
	EXDEV        = unix.EXDEV
)

// The calls, each x/sys/unix's under its own name.

func Close(fd int) error { return unix.Close(fd) }

func Faccessat(dirfd int, path string, mode uint32, flags int) error {
	return unix.Faccessat(dirfd, path, mode, flags)
}

func Fchmod(fd int, mode uint32) error { return unix.Fchmod(fd, mode) }

func Fchown(fd int, uid, gid int) error { return unix.Fchown(fd, uid, gid) }

func Flock(fd int, how int) error { return unix.Flock(fd, how) }

// LockFolder is flock of a folder's descriptor, released as flock's is.
func LockFolder(fd int, how int) error { return unix.Flock(fd, how) }

func Fstat(fd int, st *Stat_t) error { return unix.Fstat(fd, st) }

func Fstatat(dirfd int, path string, st *Stat_t, flags int) error {
	return unix.Fstatat(dirfd, path, st, flags)
}

func Fsync(fd int) error { return unix.Fsync(fd) }

func Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error {
	return unix.Linkat(olddirfd, oldpath, newdirfd, newpath, flags)
}

func Lstat(path string, st *Stat_t) error { return unix.Lstat(path, st) }

func Mkdirat(dirfd int, path string, mode uint32) error { return unix.Mkdirat(dirfd, path, mode) }

func Open(path string, flags int, mode uint32) (int, error) { return unix.Open(path, flags, mode) }

func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return unix.Openat(dirfd, path, flags, mode)
}

func Read(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

func Readlinkat(dirfd int, path string, buf []byte) (int, error) {
	return unix.Readlinkat(dirfd, path, buf)
}

func Renameat(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.Renameat(olddirfd, oldpath, newdirfd, newpath)
}

func Seek(fd int, offset int64, whence int) (int64, error) { return unix.Seek(fd, offset, whence) }

func Unlinkat(dirfd int, path string, flags int) error { return unix.Unlinkat(dirfd, path, flags) }

// FromOS is the fence's path of an OS path: on Unix the path itself.
func FromOS(p string) (string, error) { return p, nil }

// ToOS is the OS path of a fence's path: on Unix the path itself.
func ToOS(p string) string { return p }
