package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/version"
)

// NewCmdVersion returns the version command. It needs no policy.
func NewCmdVersion(app *invocation) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and Go version of this build",
		Example: "  dsh-fs version\n  dsh-fs --version",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			app.beginStatic("version")
			v := version.Build()
			if app.text {
				_, err := fmt.Fprintln(app.Stdout, v)
				return err
			}
			return app.printStatic(v)
		},
	}
}
