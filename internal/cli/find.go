package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/search"
)

// FindOptions are the inputs of find.
type FindOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	request.Find
}

// NewCmdFind returns the find command; runF replaces findRun in tests.
func NewCmdFind(app *invocation, runF func(*FindOptions) error) *cobra.Command {
	opts := &FindOptions{App: app}
	c := &cobra.Command{
		Use:   "find GLOB [PATH]",
		Short: "Find files by a ** glob, bounded and sorted",
		Long: `find lists the entries beneath PATH (default ".") whose path relative to
PATH matches GLOB ("**" spans folders; a glob with no "/" matches the base name
at any depth), with their type and size, sorted by path, or with --sort by
size, lines or mtime (largest and newest first, as ls -S and ls -t; --reverse
turns any order round). --lines counts the lines of each text file shown
(binary files, files over 16 MiB, and any past 256 MiB read in the call are
not counted: lines_skipped says why); --sort lines counts them all. The walk never
follows a symlink (symlinks are listed as such), never looks at an entry
under deny_read (counted in hidden), and skips .git and what .gitignore and
.ignore files exclude (--no-ignore to include them). At most --limit entries
and --max-bytes of them are shown; total counts them all, and a truncated
result's cursor continues with --after (a sorted result has no cursor).`,
		Example: `  dsh-fs find '**/*.go'
  dsh-fs find '*_test.go' pkg --type file
  dsh-fs find 'docs/**' --limit 50
  dsh-fs find '*.go' --type file --sort size --limit 5
  dsh-fs find '*.go' --sort lines --limit 10`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Glob, opts.Path = policyFlagsOf(c), args[0], "."
			if len(args) == 2 {
				opts.Path = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return findRun(opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Type, "type", "", "only entries of this type: file, dir, symlink or other")
	fl.IntVar(&opts.Limit, "limit", search.DefaultFindLimit, "most entries to show; total counts them all")
	fl.IntVar(&opts.MaxBytes, "max-bytes", search.DefaultSearchMaxBytes, "most bytes of JSON the shown entries may take")
	fl.StringVar(&opts.Sort, "sort", "", "order by name, size, lines or mtime (size, lines, mtime: largest and newest first)")
	fl.BoolVar(&opts.Reverse, "reverse", false, "turn the order round")
	fl.BoolVar(&opts.Lines, "lines", false, "count the lines of each text file shown")
	fl.BoolVar(&opts.NoIgnore, "no-ignore", false, "also list .git and what .gitignore and .ignore files exclude")
	fl.StringVar(&opts.After, "after", "", "continue after this cursor, from a truncated result of the same search")
	return c
}

func findRun(opts *FindOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpFind, opts.Path)
	if err != nil {
		return err
	}
	res, err := opts.Find.Run(x)
	if err != nil {
		return err
	}
	return call.print(res)
}
