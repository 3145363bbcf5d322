package cli

import (
	"github.com/spf13/cobra"
	"sync"

	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/search"
)

// GrepOptions are the inputs of grep.
type GrepOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	request.Grep
}

// NewCmdGrep returns the grep command; runF replaces grepRun in tests.
func NewCmdGrep(app *invocation, runF func(*GrepOptions) error) *cobra.Command {
	opts := &GrepOptions{App: app}
	c := &cobra.Command{
		Use:   "grep PATTERN [PATH...]",
		Short: "Search file contents for a regular expression, bounded and sorted",
		Long: `grep searches the files beneath each PATH (default ".") for PATTERN, an RE2
regular expression (Go's regexp syntax) matched within one line, or a literal
string with --fixed. Matches come sorted by path, then line, the same bytes
for the same tree. The walk never follows a symlink, never opens a file under
deny_read (counted in hidden), and skips .git, what .gitignore and .ignore
files exclude (--no-ignore to search them) and binary files. At most --limit
matches and --max-bytes of them are shown; total counts them all, and a
truncated result's cursor continues with --after. A shell's -n, -r and -E are
accepted and change nothing (lines are always numbered, folders always
searched, the syntax always RE2); -F is --fixed.`,
		Example: `  dsh-fs grep 'func \w+Handler' src
  dsh-fs grep TODO --glob '*.go' --glob '!*_test.go' --context 2
  dsh-fs grep -i --fixed 'a.b(' --files
  dsh-fs grep parseConfig --after CURSOR`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Pattern, opts.Paths = policyFlagsOf(c), args[0], args[1:]
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			if runF != nil {
				return runF(opts)
			}
			return grepRun(opts)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&opts.Fixed, "fixed", "F", false, "take PATTERN as a literal string")
	// A shell's grep habits: -n, -r and -E are what this grep always
	// does, accepted so that -rn costs no failed call; hidden, since a
	// model need not learn them (the Long help names them once).
	var habit bool
	for _, h := range [][2]string{{"line-number", "n"}, {"recursive", "r"}, {"extended-regexp", "E"}} {
		fl.BoolVarP(&habit, h[0], h[1], false, "no-op: what grep always does")
		fl.MarkHidden(h[0])
	}
	fl.BoolVarP(&opts.IgnoreCase, "ignore-case", "i", false, "match letters of either case")
	fl.StringArrayVar(&opts.Globs, "glob", nil, "search only files whose path matches this glob; \"!GLOB\" excludes (repeatable; no \"/\" matches the base name)")
	fl.IntVarP(&opts.Context, "context", "C", 0, "lines of context before and after each match")
	fl.BoolVar(&opts.Files, "files", false, "list the files that match instead of the matches")
	fl.BoolVar(&opts.Count, "count", false, "list the files that match, with how many lines match")
	fl.IntVar(&opts.Limit, "limit", search.DefaultGrepLimit, "most matches (with --files or --count, files) to show; total counts them all")
	fl.IntVar(&opts.MaxBytes, "max-bytes", search.DefaultSearchMaxBytes, "most bytes of JSON the shown matches may take")
	fl.IntVar(&opts.MaxLineBytes, "max-line-bytes", search.DefaultMaxLineBytes, "longest line text to show; longer lines are cut around the match and marked …")
	fl.BoolVar(&opts.NoIgnore, "no-ignore", false, "also search .git and what .gitignore and .ignore files exclude")
	fl.StringVar(&opts.After, "after", "", "continue after this cursor, from a truncated result of the same search")
	return c
}

// grepHabits are the flags of a shell's grep this one has under another
// name: an unknown flag among them is answered with it (usageError).
var grepHabits = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"l": "--files", "files-with-matches": "--files",
		"c":       "--count",
		"include": "--glob", "exclude": "--glob",
		"A": "--context", "B": "--context", "after-context": "--context", "before-context": "--context",
		"fixed-strings": "--fixed",
	}
})

func grepRun(opts *GrepOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpGrep, opts.Paths[0])
	if err != nil {
		return err
	}
	res, err := opts.Grep.Run(x)
	if err != nil {
		return err
	}
	return call.print(res)
}
