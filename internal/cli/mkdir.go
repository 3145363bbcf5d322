package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// MkdirOptions are the inputs of mkdir.
type MkdirOptions struct {
	App    *invocation
	Policy PolicyFlags

	Path    string
	Parents bool
	DryRun  bool
}

// NewCmdMkdir returns the mkdir command; runF replaces mkdirRun in tests.
func NewCmdMkdir(app *invocation, runF func(*MkdirOptions) error) *cobra.Command {
	opts := &MkdirOptions{App: app}
	c := &cobra.Command{
		Use:   "mkdir PATH",
		Short: "Make one folder, through the same fence as write",
		Long: `mkdir makes the folder PATH, through the confined handle of its parent: one
folder, whose parent must exist, unless --parents makes the missing ones too.
A folder that is already there is no error ("created": false), so a retry is
harmless; a file or symlink there is FS_EXISTS and is never followed.`,
		Example: `  dsh-fs mkdir src/cmd
  dsh-fs mkdir --parents docs/adr/2026
  dsh-fs mkdir ../shared/out --escalate danger-full-access --reason 'the build writes there'`,
		Args: cobra.ExactArgs(1),
		// The folder it makes is beside or beneath one that exists: a
		// tab offers folders.
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			if runF != nil {
				return runF(opts)
			}
			return mkdirRun(opts)
		},
	}
	c.Flags().BoolVarP(&opts.Parents, "parents", "p", false, "make the missing parent folders too")
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "decide and check without making anything")
	return c
}

func mkdirRun(opts *MkdirOptions) error {
	req := request.Mkdir{Path: opts.Path, Parents: opts.Parents, DryRun: opts.DryRun}
	return runByName(opts.App, opts.Policy, opts.Path, req, request.Mkdir.Run)
}

// runByName is the call of req, a request that acts on a name and
// carries no content (mkdir, move, rm): path, the name it acts on first,
// is resolved by name (a link as the link) for the result's header, and
// inside a session that escalates the call is forwarded whole.
func runByName[R request.Request, T any](app *invocation, p PolicyFlags, path string, req R, run func(R, *request.Exec) (T, error)) error {
	call, err := app.beginWith(p, req.Op(), path)
	if err != nil {
		return err
	}
	x := call.x
	t, err := x.ResolveName(path)
	app.current.Resolved = t.Path
	if err != nil {
		return err
	}
	if call.forwarded {
		return call.forward(wire.Carrying(req))
	}
	res, err := run(req, x)
	if err != nil {
		return err
	}
	return call.print(res)
}
