//go:build unix && !linux

package tty

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The requests that read and set a terminal's modes on the BSDs and
// macOS.
const (
	getModes = unix.TIOCGETA
	setModes = unix.TIOCSETA
)

// fread is FREAD of <sys/fcntl.h>: TIOCFLUSH with it flushes input.
const fread = 1

// flushInput discards what was typed into the terminal fd and not read.
func flushInput(fd int) { unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread) }

// pipeNonblock makes a pipe whose ends are close-on-exec and
// non-blocking. There is no pipe2 here: the ends are marked under
// syscall.ForkLock, as os.Pipe does, so no exec between the two calls
// inherits them.
func pipeNonblock(p []int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p); err != nil {
		return err
	}
	for _, fd := range p {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return err
		}
	}
	return nil
}

// reopenForWriting opens the terminal person is open on again, for
// writing. There is no /proc here: it opens the controlling terminal,
// /dev/tty, and keeps it only when it is the same device as person; a
// person's terminal that is not this process's controlling one cannot be
// reopened, and the relay says so rather than write elsewhere.
func reopenForWriting(person *os.File) (*os.File, error) {
	var want, got unix.Stat_t
	if err := unix.Fstat(int(person.Fd()), &want); err != nil {
		return nil, err
	}
	f, err := os.OpenFile("/dev/tty", os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Fstat(int(f.Fd()), &got); err != nil || got.Rdev != want.Rdev {
		f.Close()
		return nil, errors.New("it is not this process's controlling terminal")
	}
	return f, nil
}
