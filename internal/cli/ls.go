package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
)

// LsOptions are the inputs of ls.
type LsOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	request.List
	// DepthGiven says --depth was typed: 0 is then a bad argument, not
	// the list's "no bound".
	DepthGiven bool
}

// NewCmdLs returns the ls command; runF replaces lsRun in tests.
func NewCmdLs(app *invocation, runF func(*LsOptions) error) *cobra.Command {
	opts := &LsOptions{App: app}
	c := &cobra.Command{
		Use:        "ls [PATH]",
		SuggestFor: []string{"list", "dir", "find", "tree"},
		Short:      "List a folder",
		Example: `  dsh-fs ls
  dsh-fs ls src --recursive --depth 2
  dsh-fs ls . --all --limit 50`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.DepthGiven = policyFlagsOf(c), c.Flags().Changed("depth")
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return lsRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.All, "all", false, "include names that start with a dot")
	c.Flags().BoolVar(&opts.Recursive, "recursive", false, "descend into folders (never through symlinks)")
	c.Flags().IntVar(&opts.Depth, "depth", 0, "how many levels to list, 1 or more (1 = the folder's own entries); implies --recursive above 1; --recursive alone has no bound")
	c.Flags().IntVar(&opts.Limit, "limit", fsops.DefaultListLimit, "most entries to return, 1 or more; the walk stops there, and total counts what it read")
	return c
}

// check refuses a typed --depth below 1. 0 is the options' "no bound";
// typed, it would be a listing that means nothing, or everything: one
// thing only, a bad argument.
func (opts *LsOptions) check() error {
	if opts.DepthGiven && opts.Depth < 1 {
		return fserr.New(fserr.InvalidArgument, "ls: --depth must be 1 or more (--recursive alone has no bound)")
	}
	return nil
}

func lsRun(opts *LsOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpList, opts.Path)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	res, err := opts.List.Run(x)
	if err != nil {
		return err
	}
	return call.print(res)
}
