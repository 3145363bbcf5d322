//go:build !unix

package gocacheprog

import (
	"errors"
	"io"
	"runtime"
)

// Serve refuses here: the build cache program is a dsh-fs exec session's,
// and no session runs here (on Windows, dsh-fs runs the shell inside
// WSL2).
func Serve(io.Reader, io.Writer, string) error {
	return errors.New("no Go build cache program on " + runtime.GOOS)
}
