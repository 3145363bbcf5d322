package cmd

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/pkg/fserr"
)

// NewCmdEdit returns the edit command (not built yet).
func NewCmdEdit(app *App, _ func() error) *cobra.Command {
	return &cobra.Command{
		Use:                "edit PATH",
		Short:              "edit a file (not built yet)",
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			app.started = true
			app.current = header{Op: "edit"}
			return fserr.New(fserr.IO, "edit is not built yet")
		},
	}
}
