//go:build unix

package config

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// DefaultLocations are the trusted locations of this build.
func DefaultLocations() Locations {
	return Locations{SystemDir: systemDir, Home: userDatabaseHome}
}

// openConfigFlags open a config file: O_NONBLOCK, so a FIFO cannot hang
// the call before it is refused.
const openConfigFlags = os.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC

// openedPath is the real path of the opened file f, read back from the
// kernel.
func openedPath(f *os.File) (string, error) { return sandbox.OpenedPath(int(f.Fd())) }

// trustHint says how a trusted file is made trusted here.
const trustHint = "a trusted file and the folders above it may be written by root and its owner only (chmod go-w)"
