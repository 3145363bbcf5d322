// Package cmd is dsh-fs's command tree: flags, options, rendering results
// and the one table from error code to exit status. It does no path logic
// and no file-system work of its own.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// App holds what every command needs from the process, so tests can run
// the same entry point with their own streams.
type App struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	StdoutTTY bool
	// Locations are where the trusted config files are: fixed in a
	// release build (config.DefaultLocations); only a test binary sets
	// others.
	Locations config.Locations

	// current describes the call under way, for the failure result.
	current header
	// started is set once a command's run function begins; an error
	// before that is a usage error.
	started bool
	pretty  bool
	text    bool
	// fence is the call's fence once its policy is loaded; its mode,
	// which an escalation may have widened, goes into a failure.
	fence *sandbox.Fence
}

// Main runs dsh-fs with the process's arguments and streams and returns
// the exit status. main.go calls it and nothing else.
func Main() int {
	return NewApp(config.DefaultLocations()).Run(os.Args[1:])
}

// NewApp returns the App of this process's streams, with the trusted
// config files at loc.
func NewApp(loc config.Locations) *App {
	return &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, StdoutTTY: isTerminal(os.Stdout), Locations: loc}
}

// Run executes one call and returns its exit status. It alone prints
// errors and picks the status.
func (a *App) Run(args []string) int {
	a.pretty = a.StdoutTTY
	root := NewCmdRoot(a)
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	c, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	if !a.started {
		// Cobra's own complaints (unknown command or flag, wrong number
		// of arguments) carry no code: they are usage errors.
		var coder fserr.Coder
		if !errors.As(err, &coder) {
			err = fserr.Wrap(fserr.InvalidArgument, err.Error(), err)
		}
		if a.current.Op == "" && c != root {
			a.current.Op = topCommand(c, root).Name()
		}
		fmt.Fprint(a.Stderr, c.UsageString())
	}
	a.fail(err)
	return exitStatus(fserr.CodeOf(err))
}

// fail prints the failure result of the current call.
func (a *App) fail(err error) {
	if a.fence != nil {
		a.current.Mode = string(a.fence.Mode())
		a.current.Escalated = a.fence.Escalated()
	}
	if a.text {
		a.textOut().failure(newFailure(a.current, err))
		return
	}
	if err := encodeJSON(a.Stdout, newFailure(a.current, err), a.pretty); err != nil {
		fmt.Fprintln(a.Stderr, "dsh-fs:", err)
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (a *App) textOut() textOut {
	return textOut{out: a.Stdout, note: a.Stderr, color: a.StdoutTTY}
}

// topCommand is the command of the tree's first level that c belongs to:
// "completion" for "completion bash".
func topCommand(c, root *cobra.Command) *cobra.Command {
	for c.HasParent() && c.Parent() != root {
		c = c.Parent()
	}
	return c
}
