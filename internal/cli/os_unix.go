//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}

// closeOnExec marks fd close-on-exec.
func closeOnExec(fd int) { unix.CloseOnExec(fd) }

// replaceWith replaces this process with the program bin, given argv and
// this process's environment (execve). It returns only if that fails.
func replaceWith(bin string, argv []string) error { return unix.Exec(bin, argv, os.Environ()) }
