package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/request"
)

// RmOptions are the inputs of rm.
type RmOptions struct {
	App    *invocation
	Policy PolicyFlags

	Path   string
	DryRun bool
}

// NewCmdRm returns the rm command; runF replaces rmRun in tests.
func NewCmdRm(app *invocation, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{App: app}
	c := &cobra.Command{
		Use:        "rm PATH",
		SuggestFor: []string{"remove", "delete", "unlink", "rmdir"},
		Short:      "Remove a file, a symlink or an empty folder; never recursive",
		Long: `rm removes PATH through the confined handle of its folder: a file, a symlink
(the link, never what it names) or an empty folder. A folder that holds
anything is FS_IS_DIR and nothing is removed: rm is never recursive.`,
		Example: `  dsh-fs rm build/old.log
  dsh-fs rm empty_dir --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			if runF != nil {
				return runF(opts)
			}
			return rmRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "decide and check without removing anything")
	return c
}

func rmRun(opts *RmOptions) error {
	req := request.Remove{Path: opts.Path, DryRun: opts.DryRun}
	return runByName(opts.App, opts.Policy, opts.Path, req, request.Remove.Run)
}
