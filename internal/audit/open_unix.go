//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/trust"
)

// trustHint says how the audit log is made trusted here.
const trustHint = "the audit log and the folders above it may be written by root and its owner only (chmod go-w)"

// openAppend opens the log for one append, never through a symlink, and
// refuses it where it has more than one link (a second name could lie
// where the session writes): a *trust.UnsafeError.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, &trust.UnsafeError{Path: path, Why: "a symlink"}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Sys().(*syscall.Stat_t).Nlink != 1 {
		err = &trust.UnsafeError{Path: path, Why: "it has more than one link"}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// flock takes an exclusive lock of f, waiting at most lockWait.
func flock(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("locked by another process for more than %s", lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closeOnExec marks fd close-on-exec.
func closeOnExec(fd int) { unix.CloseOnExec(fd) }
