//go:build !unix

package bridge

import (
	"errors"
	"net"
	"os"
	"runtime"
)

// Bridge refuses here: descriptors travel over a Unix socket, and no
// dsh-fs exec session runs here (on Windows, dsh-fs runs the shell
// inside WSL2).
func Bridge(*net.TCPListener, *os.File) error {
	return errors.New("proxy bridge: no dsh-fs exec session on " + runtime.GOOS)
}
