package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// UsageDetail is the detail of a usage error, one found while the command
// line was parsed (docs/design.md §6): the command's one-line usage and,
// for an unknown flag or command, the names that come closest. It stands
// in for the usage dump, which costs a model more than it tells.
type UsageDetail struct {
	Usage      string   `json:"usage"`
	DidYouMean []string `json:"did_you_mean,omitempty"`
}

// complaints are Cobra's and pflag's complaints, as they word them.
type complaints struct {
	unknownFlag, unknownShorthand, unknownCommand, flagGroup *regexp.Regexp
}

// cobraComplaints compiles them at the first usage error, not at the
// start of every call (a tenth of a millisecond).
var cobraComplaints = sync.OnceValue(func() complaints {
	return complaints{
		unknownFlag:      regexp.MustCompile(`^unknown flag: (--\S+)$`),
		unknownShorthand: regexp.MustCompile(`^unknown shorthand flag: '(.)' in (-\S+)$`),
		unknownCommand:   regexp.MustCompile(`^unknown command "([^"]*)" for "[^"]*"`),
		flagGroup:        regexp.MustCompile(`^if any flags in the group \[([^\]]*)\] are set none of the others can be; \[([^\]]*)\] were all set$`),
	}
})

// usageError turns what cobra said about the command line of c (root is
// the tree's root) into one FS_INVALID_ARGUMENT error: a message that
// names the command, the one-line usage in its detail, suggestions for an
// unknown flag or command, and a hint where to look.
func usageError(c, root *cobra.Command, err error) *fserr.Error {
	msg := err.Error()
	var fe *fserr.Error
	if errors.As(err, &fe) && fe.Err != nil {
		msg = fe.Err.Error()
	}
	detail := UsageDetail{Usage: c.UseLine()}
	hint := c.CommandPath() + " --help lists its flags"
	prefix := ""
	if c != root {
		prefix = strings.TrimPrefix(c.CommandPath(), root.Name()+" ") + ": "
	}

	re := cobraComplaints()
	switch m := (struct{ flag, short, command, group []string }{
		re.unknownFlag.FindStringSubmatch(msg),
		re.unknownShorthand.FindStringSubmatch(msg),
		re.unknownCommand.FindStringSubmatch(msg),
		re.flagGroup.FindStringSubmatch(msg),
	}); {
	case m.flag != nil:
		name := strings.TrimPrefix(m.flag[1], "--")
		if h, ok := habitFor(c, name); ok {
			detail.DidYouMean = []string{h}
		} else {
			detail.DidYouMean = suggestFlags(c, name)
		}
		msg = prefix + "unknown flag " + m.flag[1] + didYouMean(detail.DidYouMean)
	case m.short != nil:
		// "-old" is the long flag typed with one dash more often than
		// a run of shorthands.
		name := strings.TrimPrefix(m.short[2], "-")
		if f := c.Flags().Lookup(name); f != nil {
			detail.DidYouMean = []string{"--" + f.Name}
		} else if h, ok := habitFor(c, m.short[1]); ok {
			detail.DidYouMean = []string{h}
		} else {
			detail.DidYouMean = suggestFlags(c, name)
		}
		msg = prefix + "unknown flag " + m.short[2] + didYouMean(detail.DidYouMean)
	case m.command != nil && c == root:
		detail.DidYouMean = suggestCommands(root, m.command[1])
		msg = fmt.Sprintf("unknown command %q%s", m.command[1], didYouMean(detail.DidYouMean))
	case m.command != nil:
		msg = fmt.Sprintf("%stakes no argument, got %q", prefix, m.command[1])
	case m.group != nil:
		names := strings.Fields(m.group[2])
		for i, n := range names {
			names[i] = "--" + n
		}
		if len(names) == 2 {
			msg = prefix + "give " + names[0] + " or " + names[1] + ", not both"
		} else {
			msg = prefix + "give only one of " + strings.Join(names, ", ")
		}
	case c == root:
		// "missing command" and the like: the root's own words.
	default:
		msg = prefix + msg
	}
	if c == root {
		detail.Usage = root.Name() + " COMMAND [flags]"
		hint = "commands: " + strings.Join(commandNames(root), ", ") + "; dsh-fs COMMAND --help for one"
	}
	e := fserr.Wrap(fserr.InvalidArgument, msg, err)
	e.Detail, e.Hint = detail, hint
	return e
}

// shellHabits are, for each command that stands in for a shell tool, the
// flags of that tool (named without dashes) it has under another name.
func shellHabits(command string) map[string]string {
	if command == "grep" {
		return grepHabits()
	}
	return nil
}

// habitFor returns the flag of c that stands for the shell's flag name.
func habitFor(c *cobra.Command, name string) (string, bool) {
	h, ok := shellHabits(c.Name())[name]
	return h, ok
}

// didYouMean is the message's tail for suggestions, if any.
func didYouMean(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + names[0] + "?"
	}
	return "; did you mean " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + "?"
}

// commandNames are the root's commands a user may call, in help's order.
func commandNames(root *cobra.Command) []string {
	var names []string
	for _, sub := range root.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// suggestCommands returns the commands that stand for name: those that
// list it in SuggestFor (read for cat), or else those close to it by
// cobra's measure (read for raed).
func suggestCommands(root *cobra.Command, name string) []string {
	var out []string
	for _, sub := range root.Commands() {
		if sub.IsAvailableCommand() && slices.Contains(sub.SuggestFor, name) {
			out = append(out, sub.Name())
		}
	}
	if len(out) > 0 {
		return out
	}
	return root.SuggestionsFor(name)
}

// maxSuggestions bounds the flags suggested for one unknown flag.
const maxSuggestions = 3

// suggestFlags returns c's flags (its own and those it inherits) closest
// to the unknown name, closest first: a flag whose name is the start of
// name up to a dash (--old for --old-text) or starts with name (--replace
// for --replace-all), then those within a small edit distance.
func suggestFlags(c *cobra.Command, name string) []string {
	type candidate struct {
		flag string
		dist int
	}
	var found []candidate
	seen := map[string]bool{}
	consider := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] || f.Name == "help" {
			return
		}
		seen[f.Name] = true
		d := levenshtein(name, f.Name)
		switch {
		case strings.HasPrefix(name, f.Name+"-"), strings.HasPrefix(f.Name, name) && len(name) >= 3:
			d = min(d, 1)
		case d > max(2, len(name)/4):
			return
		}
		found = append(found, candidate{f.Name, d})
	}
	c.LocalFlags().VisitAll(consider)
	c.InheritedFlags().VisitAll(consider)
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].flag < found[j].flag
	})
	var out []string
	for i, f := range found {
		if i == maxSuggestions {
			break
		}
		out = append(out, "--"+f.flag)
	}
	return out
}

// levenshtein is the edit distance of a and b, in bytes: flag names are
// ASCII.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
