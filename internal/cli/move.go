package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/request"
)

// MoveOptions are the inputs of move.
type MoveOptions struct {
	App    *invocation
	Policy PolicyFlags

	Source      string
	Destination string
	DryRun      bool
}

// NewCmdMove returns the move command; runF replaces moveRun in tests.
func NewCmdMove(app *invocation, runF func(*MoveOptions) error) *cobra.Command {
	opts := &MoveOptions{App: app}
	c := &cobra.Command{
		Use:        "move SRC DST",
		Aliases:    []string{"mv"},
		SuggestFor: []string{"rename"},
		Short:      "Rename a file, symlink or folder to a path that does not exist",
		Long: `move renames SRC to DST in one rename between the two folders' confined
handles. It never replaces: an existing DST is FS_EXISTS, and DST names the new
path, never a folder to move into. A symlink is moved as a link. A folder moves
with what it holds, unless a deny_read or protected entry would cover its
contents on one side only. Both ends are mutations the fence decides.`,
		Example: `  dsh-fs move notes.md docs/notes.md
  dsh-fs move old_pkg new_pkg --dry-run`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Source, opts.Destination = policyFlagsOf(c), args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return moveRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "decide and check without moving anything")
	return c
}

func moveRun(opts *MoveOptions) error {
	req := request.Move{Source: opts.Source, Destination: opts.Destination, DryRun: opts.DryRun}
	return runByName(opts.App, opts.Policy, opts.Source, req, request.Move.Run)
}
