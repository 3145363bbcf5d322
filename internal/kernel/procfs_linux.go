package kernel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// /proc is trusted only once it is verified, as filepath-securejoin
// does: the folder mounted there must be a procfs (its magic number, by
// fstatfs) and its root (inode 1), not a tmpfs or a bind mount of
// something else a process could lay out with symlinks that say what it
// likes. Where it is not, what the fence would read back from it is not
// known, and a mutation that needs it is refused (FS_IO), never decided
// on the name.

// procRootIno is the inode of the root of every procfs.
const procRootIno = 1

// ProcRoot returns the verified /proc, opened once per process: a
// procfs's root, or the error that says why /proc is not one.
func ProcRoot() (int, error) { return procRoot() }

var procRoot = sync.OnceValues(openProcRoot)

func openProcRoot() (int, error) {
	fd, err := unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("/proc cannot be opened: %w", err)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("/proc: fstatfs: %w", err)
	}
	if fs.Type != unix.PROC_SUPER_MAGIC {
		unix.Close(fd)
		return -1, fmt.Errorf("/proc is not a procfs (file system magic %#x)", fs.Type)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("/proc: fstat: %w", err)
	}
	if st.Ino != procRootIno {
		unix.Close(fd)
		return -1, fmt.Errorf("/proc is not the root of a procfs (inode %d)", st.Ino)
	}
	return fd, nil
}

// errNoPath is a descriptor whose path the kernel does not give: an
// object with none (a pipe), or one too long for it.
var errNoPath = errors.New("the kernel gives no path for it")

// procSelfFd is a handle on /proc/self/fd of the verified /proc (checked
// as /proc is), opened once per process; on error descriptors are read
// back through thread-self each time. Every thread shares one descriptor
// table (Go's threads are made with CLONE_FILES), so the thread group's fd
// folder names any thread's descriptors, and reading one back here is
// one lookup where "thread-self/fd/N" is four: a walk reads one back per
// folder, which keeps what deny_read adds to find small.
var procSelfFd = sync.OnceValues(func() (int, error) {
	proc, err := ProcRoot()
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(proc, "self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var fs unix.Statfs_t
	var st, root unix.Stat_t
	if unix.Fstatfs(fd, &fs) != nil || fs.Type != unix.PROC_SUPER_MAGIC ||
		unix.Fstat(fd, &st) != nil || unix.Fstat(proc, &root) != nil || st.Dev != root.Dev {
		unix.Close(fd)
		return -1, errors.New("/proc/self/fd is not the verified procfs's")
	}
	return fd, nil
})

// readBacks counts OpenedPath's calls in this process.
var readBacks atomic.Int64

// OpenedPath is the path of fd now, read back from the verified /proc; a
// deleted file keeps the path it had.
func OpenedPath(fd int) (string, error) {
	proc, err := ProcRoot()
	if err != nil {
		return "", err
	}
	// On the stack: a walk reads back one path a folder, and a PathMax
	// buffer from the heap each time was most of a search's garbage.
	var buf [unix.PathMax]byte
	n := -1
	// The handle costs three calls to open and check: a call that reads
	// back one descriptor (a stat) asks thread-self, a walk opens it on
	// its second read-back.
	if readBacks.Add(1) > 1 {
		if dir, err := procSelfFd(); err == nil {
			if n, err = unix.Readlinkat(dir, strconv.Itoa(fd), buf[:]); err != nil {
				n = -1 // asked again through thread-self, which gives the error
			}
		}
	}
	if n < 0 {
		n, err = unix.Readlinkat(proc, "thread-self/fd/"+strconv.Itoa(fd), buf[:])
		if err != nil {
			return "", fmt.Errorf("reading back descriptor %d from /proc: %w", fd, err)
		}
	}
	p := string(buf[:n])
	if !strings.HasPrefix(p, "/") {
		return "", errNoPath
	}
	return strings.TrimSuffix(p, " (deleted)"), nil
}
