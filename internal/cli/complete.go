package cli

import (
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// flagValues are the flags whose value is one of a few words, by name,
// with those words: a shell's tab offers them instead of files.
func flagValues() map[string][]string {
	modes := make([]string, len(policy.Modes))
	for i, m := range policy.Modes {
		modes[i] = string(m)
	}
	return map[string][]string{
		config.FlagMode:     modes,
		config.FlagEscalate: modes,
		config.FlagOutput:   {"json", "text"},
		config.FlagEnforce:  {string(policy.EnforceAuto), string(policy.EnforceLandlock), string(policy.EnforceOff)},
		flagDiff:            {string(diff.FormAuto), string(diff.FormFull), string(diff.FormSummary)},
		"type":              {"file", "dir", "symlink", "other"},
	}
}

// completeFlagValues registers, on every command of root's tree that has
// one of flagValues' flags (its own or inherited), the completion of its
// words.
func completeFlagValues(root *cobra.Command) {
	values := flagValues()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// Cobra builds the flag set anew at each call: once per command,
		// not once per flag (a whole tree's build was twice as slow).
		local := c.LocalNonPersistentFlags()
		for name, words := range values {
			// A persistent flag is registered once, on the root that
			// declares it; cobra finds it for every command below.
			if local.Lookup(name) == nil && (c != root || c.PersistentFlags().Lookup(name) == nil) {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
