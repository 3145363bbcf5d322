package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/request"
)

// ReadOptions are the inputs of read.
type ReadOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	Path   string
	Offset int
	// Limit is --limit, nil when not given: the settings' read_max_lines
	// then bounds the window.
	Limit *int
	Raw   bool
}

// NewCmdRead returns the read command; runF replaces readRun in tests.
func NewCmdRead(app *invocation, runF func(*ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{App: app}
	var limit int
	c := &cobra.Command{
		Use:        "read PATH",
		SuggestFor: []string{"cat", "head", "tail", "less", "more", "view", "show", "open"},
		Short:      "Read a window of a text file, or stream its bytes with --raw",
		Example: `  dsh-fs read src/main.go
  dsh-fs read src/main.go --offset 120 --limit 40
  dsh-fs read image.png --raw > copy.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			if c.Flags().Changed("limit") {
				opts.Limit = &limit
			}
			if runF != nil {
				return runF(opts)
			}
			return readRun(opts)
		},
	}
	c.Flags().IntVar(&opts.Offset, "offset", 1, "first line to return, counted from 1")
	c.Flags().IntVar(&limit, "limit", 0, "most lines to return (default read_max_lines, 2000)")
	c.Flags().BoolVar(&opts.Raw, "raw", false, "stream the file's bytes to stdout unchanged, without JSON")
	return c
}

func readRun(opts *ReadOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpRead, opts.Path)
	if err != nil {
		return err
	}
	req := request.Read{Path: opts.Path, Offset: opts.Offset}
	if opts.Raw {
		_, err := req.Stream(x, opts.App.Stdout)
		return err
	}
	req.Limit = opts.Limit
	res, err := req.Run(x)
	if err != nil {
		return err
	}
	return call.print(res)
}
