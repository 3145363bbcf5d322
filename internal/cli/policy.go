package cli

import (
	"io"

	"github.com/dshfs/dsh-fs/internal/fserr"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/policyview/report"
	"github.com/dshfs/dsh-fs/internal/result"
)

// PolicyOptions are the inputs of policy.
type PolicyOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	// Context prints the sandbox:policy block for a model's context
	// instead of the JSON result; with Verbose, the long block that
	// lists every glob, cache and rule.
	Context bool
	// Verbose prints every setting, at its default too, and what holds
	// for the shell in words; without it the result is the short one
	// (report.Policy.Short).
	Verbose bool
	// Format, when FormatSBPL, prints the macOS Seatbelt profile of a
	// session under the policy instead (policySBPL).
	Format string
}

// NewCmdPolicy returns the policy command; runF replaces policyRun in tests.
func NewCmdPolicy(app *invocation, runF func(*PolicyOptions) error) *cobra.Command {
	opts := &PolicyOptions{App: app}
	c := &cobra.Command{
		Use:   "policy",
		Short: "Print the effective policy, where each setting came from, and the writable roots",
		Example: `  dsh-fs policy
  dsh-fs policy --verbose   # every setting with its origin, the shell's layers in words
  dsh-fs policy --context   # the sandbox:policy block for a model's context
  dsh-fs policy --context --verbose   # that block with every glob, cache and rule
  dsh-fs policy --format sbpl   # the Seatbelt profile and parameters a macOS session would apply`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy = policyFlagsOf(c)
			if opts.Format != "" && opts.Format != FormatSBPL {
				return fserr.New(fserr.InvalidArgument, "--format "+opts.Format+": the only format is "+FormatSBPL)
			}
			if runF != nil {
				return runF(opts)
			}
			return policyRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.Context, "context", false, "print the sandbox:policy block a harness adds to the model's context")
	c.Flags().StringVar(&opts.Format, "format", "", "sbpl: print the macOS Seatbelt profile of a dsh-fs exec session here, and its parameters")
	c.Flags().BoolVar(&opts.Verbose, "verbose", false, "also print the settings at their defaults and what holds for the shell in words; with --context, the long block")
	return c
}

func policyRun(opts *PolicyOptions) error {
	call, err := opts.App.beginWith(opts.Policy, "policy", "")
	if err != nil {
		return err
	}
	p := call.settings.Policy
	roots, err := call.fence.Roots()
	if err != nil {
		return err
	}
	if opts.Format == FormatSBPL {
		return policySBPL(opts.App.Stdout, call.settings)
	}
	if opts.Context {
		block := report.Block(p, roots, call.settings.Session, opts.Verbose)
		_, err := io.WriteString(opts.App.Stdout, result.OSPathsIn(block))
		return err
	}
	res, err := report.New(call.settings, roots)
	if err != nil {
		return err
	}
	if !opts.Verbose {
		res = res.Short()
	}
	return call.print(res)
}
