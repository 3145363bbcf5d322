package tty

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The requests that read and set a terminal's modes on Linux.
const (
	getModes = unix.TCGETS
	setModes = unix.TCSETS
)

// flushInput discards what was typed into the terminal fd and not read.
func flushInput(fd int) { unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }

// pipeNonblock makes a pipe whose ends are close-on-exec and
// non-blocking, in one call.
func pipeNonblock(p []int) error { return unix.Pipe2(p, unix.O_CLOEXEC|unix.O_NONBLOCK) }

// reopenForWriting opens the terminal person is open on again, for
// writing, through /proc: a new open file description of the same
// terminal, whatever its name.
func reopenForWriting(person *os.File) (*os.File, error) {
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", person.Fd()), os.O_WRONLY|unix.O_NOCTTY, 0)
}
