package cmd

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/pkg/fserr"
)

// NewCmdRead returns the read command (not built yet).
func NewCmdRead(app *App, _ func() error) *cobra.Command { return pending(app, "read") }

// NewCmdWrite returns the write command (not built yet).
func NewCmdWrite(app *App, _ func() error) *cobra.Command { return pending(app, "write") }

// NewCmdEdit returns the edit command (not built yet).
func NewCmdEdit(app *App, _ func() error) *cobra.Command { return pending(app, "edit") }

func pending(app *App, op string) *cobra.Command {
	return &cobra.Command{
		Use:                op + " PATH",
		Short:              op + " a file (not built yet)",
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			app.started = true
			app.current = header{Op: op}
			return fserr.New(fserr.IO, op+" is not built yet")
		},
	}
}
