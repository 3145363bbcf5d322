package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/request"
)

// StatOptions are the inputs of stat.
type StatOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	Path string
}

// NewCmdStat returns the stat command; runF replaces statRun in tests.
func NewCmdStat(app *invocation, runF func(*StatOptions) error) *cobra.Command {
	opts := &StatOptions{App: app}
	return &cobra.Command{
		Use:        "stat PATH",
		SuggestFor: []string{"info", "exists", "file"},
		Short:      "Describe a path and whether a write there would pass the policy",
		Example: `  dsh-fs stat go.mod
  dsh-fs stat /etc/hosts   # "writable": false, "writable_reason": "outside writable roots"`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			if runF != nil {
				return runF(opts)
			}
			return statRun(opts)
		},
	}
}

func statRun(opts *StatOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpStat, opts.Path)
	if err != nil {
		return err
	}
	res, err := request.Stat{Path: opts.Path}.Run(x)
	if err != nil {
		return err
	}
	if !res.Writable {
		t, _ := x.Resolve(opts.Path)
		res.Shell, res.WayForward = policyview.ShellAccess(call.settings.Policy, call.settings.Session, t, res.Verdict)
	}
	return call.print(res)
}
