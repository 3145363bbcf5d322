package cli

import (
	"errors"
	"os"
	"os/exec"

	"golang.org/x/sys/windows"
)

func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// closeOnExec does nothing on Windows: a handle passes to a child only
// where the parent asks for it.
func closeOnExec(int) {}

// replaceWith runs the program bin with argv, this process's standard
// streams and environment, and exits with its status: Windows has no
// execve, so this process waits in its place (the client's pipes carry
// over, the pid does not). It returns only if bin cannot be started.
func replaceWith(bin string, argv []string) error {
	c := exec.Command(bin, argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	}
	return err
}
