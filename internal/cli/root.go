package cli

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/version"
)

// NewCmdRoot returns the dsh-fs command tree of one run of app, with
// the completion of every flag's words registered.
func NewCmdRoot(app *App) *cobra.Command {
	return newCmdRoot(&invocation{App: *app})
}

// newCmdRoot is NewCmdRoot for the run inv.
func newCmdRoot(app *invocation) *cobra.Command {
	root := newWholeTree(app)
	completeFlagValues(root)
	return root
}

// newWholeTree is NewCmdRoot without the completion of flags' words,
// which only a shell's completion request (__complete) reads: walking
// the tree to register them cost about a twentieth of a call that takes
// the whole tree (help, a usage error).
func newWholeTree(app *invocation) *cobra.Command {
	root := newRootCommand()
	for _, fc := range fileCommands {
		root.AddCommand(fc.build(app))
	}
	root.AddCommand(
		NewCmdPolicy(app, nil),
		NewCmdDenials(app, nil),
		NewCmdMcp(app, nil),
		NewCmdExec(app, nil),
		NewCmdAudit(app, nil),
		NewCmdTools(app),
		NewCmdVersion(app),
		newPolicyFlagsTopic(root),
	)
	// Cobra adds its completion command when it runs; adding it now lets it
	// carry examples and appear in the man pages like the others.
	root.InitDefaultCompletionCmd()
	completionExamples := map[string]string{
		"bash":       `  source <(dsh-fs completion bash)`,
		"zsh":        `  dsh-fs completion zsh > "${fpath[1]}/_dsh-fs"`,
		"fish":       `  dsh-fs completion fish > ~/.config/fish/completions/dsh-fs.fish`,
		"powershell": `  dsh-fs completion powershell | Out-String | Invoke-Expression`,
	}
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = completionExamples["bash"] + "\n" + completionExamples["zsh"] + "\n" + completionExamples["fish"]
			for _, sub := range c.Commands() {
				sub.Example = completionExamples[sub.Name()]
			}
		}
	}
	return root
}

// A fileCommand is a command a call usually is: its name and its
// constructor.
type fileCommand struct {
	name  string
	build func(*invocation) *cobra.Command
}

// fileCommands are the commands a call usually is, by name, each with
// its constructor, in the order NewCmdRoot adds them: newCmdTree builds
// only the one being run.
var fileCommands = []fileCommand{
	{"read", func(a *invocation) *cobra.Command { return NewCmdRead(a, nil) }},
	{"write", func(a *invocation) *cobra.Command { return NewCmdWrite(a, nil) }},
	{"edit", func(a *invocation) *cobra.Command { return NewCmdEdit(a, nil) }},
	{"patch", func(a *invocation) *cobra.Command { return NewCmdPatch(a, nil) }},
	{"ls", func(a *invocation) *cobra.Command { return NewCmdLs(a, nil) }},
	{"grep", func(a *invocation) *cobra.Command { return NewCmdGrep(a, nil) }},
	{"find", func(a *invocation) *cobra.Command { return NewCmdFind(a, nil) }},
	{"stat", func(a *invocation) *cobra.Command { return NewCmdStat(a, nil) }},
	{"move", func(a *invocation) *cobra.Command { return NewCmdMove(a, nil) }},
	{"mkdir", func(a *invocation) *cobra.Command { return NewCmdMkdir(a, nil) }},
	{"rm", func(a *invocation) *cobra.Command { return NewCmdRm(a, nil) }},
}

// oneCommandTrees are the commands newCmdTree builds alone when named
// first: the file commands, and the commands a harness starts for every
// session or asks before it (exec, policy, version), none of which looks
// at the rest of the tree. The whole tree cost exec's supervisor about
// 2 ms of its start.
var oneCommandTrees = append(slices.Clip(fileCommands),
	fileCommand{"exec", func(a *invocation) *cobra.Command { return NewCmdExec(a, nil) }},
	fileCommand{"policy", func(a *invocation) *cobra.Command { return NewCmdPolicy(a, nil) }},
	fileCommand{"version", NewCmdVersion},
)

// newCmdTree is the command tree a call with args runs in: for a command
// of oneCommandTrees named first, with no help asked for anywhere on the
// line, the root and that command alone, which parse, run and fail exactly as in
// the whole tree (a command's flags, usage line and errors are its own
// and the root's); otherwise the whole tree (NewCmdRoot), which help,
// completion, suggestions for an unknown command and the other commands
// need. Building every command and cobra's completion command cost about
// a tenth of a small call's user time.
func newCmdTree(app *invocation, args []string) *cobra.Command {
	if len(args) == 0 {
		return newWholeTree(app)
	}
	if isCompletionRequest(args[0]) {
		return newCmdRoot(app)
	}
	i := slices.IndexFunc(oneCommandTrees, func(fc fileCommand) bool { return fc.name == args[0] })
	if i < 0 {
		return newWholeTree(app)
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") || a == "help" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'h')) {
			return newWholeTree(app)
		}
	}
	root := newRootCommand()
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(oneCommandTrees[i].build(app))
	return root
}

// isCompletionRequest says whether arg, a call's first, is a shell's
// completion request, the one call that reads the completion of flags'
// words (cobra adds the command that answers it as it executes).
func isCompletionRequest(arg string) bool {
	return arg == cobra.ShellCompRequestCmd || arg == cobra.ShellCompNoDescRequestCmd
}

// versionOnly says whether args ask for the version and nothing else:
// "--version" or cobra's shorthand "-v", alone.
func versionOnly(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-v")
}

// versionTemplate is how the root's --version prints the version: the
// version line, nothing else (App.Run prints the same for versionOnly
// without building a tree).
const versionTemplate = "{{.Version}}\n"

// newRootCommand is the root command with no subcommands: its flags,
// templates and version.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "dsh-fs",
		Short: "Sandboxed file reads, writes and edits for coding agents",
		Long: `dsh-fs reads, writes, edits and lists files under a sandbox policy and
prints one JSON result per call: the data, a bounded diff of what changed, or
a structured denial with the marker models recognise.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return fserr.New(fserr.InvalidArgument, "missing command")
		},
	}
	// A usage error suggests the commands this close to an unknown one.
	root.SuggestionsMinimumDistance = 2
	root.Version = version.Build().String()
	root.SetVersionTemplate(versionTemplate)
	root.Example = `  dsh-fs read src/main.go --offset 120 --limit 40
  dsh-fs edit src/main.go --old 'retries := 3' --new 'retries := 5'
  dsh-fs write notes.md --from draft.md
  dsh-fs policy --context`
	// The root's --help names the variables every command reads; a
	// command's names the shared policy flags in one line and points to
	// the help topic that has them, with the variables (the
	// block cost 1.9 KB of every command's help).
	// Both are computed when a help or a usage is printed, not by every
	// call (a fiftieth of a stat's time).
	addTemplateFuncs()
	root.SetHelpTemplate(root.HelpTemplate() + "{{if not .HasParent}}{{" + funcEnvironmentHelp + "}}{{end}}")
	root.SetUsageTemplate(policyFlagsLine(root.UsageTemplate()))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fserr.Wrap(fserr.InvalidArgument, err.Error(), err)
	})
	addPolicyFlags(root.PersistentFlags())
	return root
}

// The template functions of the help and usage templates: cobra's
// templates are shared by every command tree of the process, so the
// names say whose they are.
const (
	funcEnvironmentHelp = "dshfsEnvironmentHelp"
	funcPolicyFlagNames = "dshfsPolicyFlagNames"
)

// addTemplateFuncs adds them, once: cobra keeps them in a map of its
// package, which a template reads as it is parsed.
var addTemplateFuncs = sync.OnceFunc(func() {
	cobra.AddTemplateFuncs(template.FuncMap{funcEnvironmentHelp: environmentHelp, funcPolicyFlagNames: policyFlagNames})
})

// environmentHelp is the help's last section: the DSH_FS_* variables,
// each a session source.
func environmentHelp() string {
	vars := config.Environment()
	width := 0
	for _, v := range vars {
		width = max(width, len(v.Name))
	}
	var b strings.Builder
	b.WriteString("\nEnvironment (session sources: they may narrow the trusted policy, never widen it):\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, v.Name, v.Doc)
	}
	return b.String()
}

// globalFlagsBlock is the inherited flags' section of cobra's usage
// template.
const globalFlagsBlock = `{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`

// policyFlagsLine replaces, in the usage template tmpl, the section that
// lists the inherited policy flags with one line naming them and the
// help topic that describes them.
func policyFlagsLine(tmpl string) string {
	if !strings.Contains(tmpl, globalFlagsBlock) {
		// A cobra whose template changed: keep the block rather than
		// lose the flags.
		return tmpl
	}
	return strings.Replace(tmpl, globalFlagsBlock, `{{if .HasAvailableInheritedFlags}}

Policy flags ({{`+funcPolicyFlagNames+`}}) and the DSH_FS_* variables: dsh-fs help policy-flags{{end}}`, 1)
}

// policyFlagNames are the flags addPolicyFlags adds, as typed.
func policyFlagNames() string {
	var fs pflag.FlagSet
	addPolicyFlags(&fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// newPolicyFlagsTopic is "dsh-fs help policy-flags": the flags every
// command shares and the DSH_FS_* variables, once.
func newPolicyFlagsTopic(root *cobra.Command) *cobra.Command {
	topic := &cobra.Command{
		Use:   "policy-flags",
		Short: "The policy flags every command takes, and the DSH_FS_* variables",
	}
	topic.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprintf(c.OutOrStdout(), "Policy flags, taken by every command (session sources: each may narrow the trusted\npolicy, never widen it):\n%s%s", root.PersistentFlags().FlagUsages(), environmentHelp())
	})
	return topic
}

// addPolicyFlags adds the flags every command shares: the policy sources
// and the per-call escalation.
func addPolicyFlags(fs *pflag.FlagSet) {
	// Every policy flag is a session source: it may narrow the trusted
	// policy, never widen it (docs/design.md §2).
	fs.String(config.FlagMode, "", "sandbox mode, at most the trusted one: read-only, workspace-write or danger-full-access")
	fs.String(config.FlagCwd, "", "session cwd: the workspace root and base of relative paths, if the trusted policy allows it")
	fs.StringArray(config.FlagWritableRoot, nil, "an extra writable root beneath an allowed root (repeatable)")
	fs.Bool(config.FlagTmp, true, "include /tmp and the OS temp folder among the writable roots (=false to leave them out)")
	fs.String(config.FlagConfig, "", "a session config file, which may only narrow the policy of the trusted files")
	fs.String(config.FlagOutput, "", "output format: json or text")
	fs.String(config.FlagEnforce, "", "kernel enforcement, at least the trusted one: auto, landlock or off")
	fs.String(config.FlagEscalate, "", "ask for this mode for this one call; the trusted approval decides")
	fs.String(flagReason, "", "with --escalate: why this call needs it, in a sentence; the approver is shown it as the model's words")
	config.MarkSetting(fs, config.FlagMode, config.FlagCwd, config.FlagWritableRoot, config.FlagTmp, config.FlagOutput, config.FlagEnforce)
}

// flagReason is --reason, beside --escalate: the model's reason, for
// the approver.
const flagReason = "reason"

// flagDiff is write's and edit's --diff: how much of the diff to give.
const flagDiff = "diff"

// addMutationFlags adds the flags write and edit share, into m:
// optimistic concurrency, the dry run, and the form and bounds of the
// diff (the bounds are settings, for config.Load).
func addMutationFlags(fs *pflag.FlagSet, op string, m *request.Mutation) {
	fs.StringVar(&m.IfMatch, "if-match", "", op+" only if the current content has this SHA-256")
	addDiffFlags(fs, &m.DryRun, &m.Diff)
}

// addDiffFlags adds the dry run and the form of the diff, into dryRun and
// form, and the diff's bounds, settings for config.Load: every mutation
// shares them (patch takes --if-match per file).
func addDiffFlags(fs *pflag.FlagSet, dryRun *bool, form *string) {
	addDiffFlagsFrom(fs, dryRun, form, diff.FormAuto)
}

// addDiffFlagsFrom is addDiffFlags with --diff's default def: patch's is
// summary, since a patch's diffs are what the model just wrote.
func addDiffFlagsFrom(fs *pflag.FlagSet, dryRun *bool, form *string, def diff.Form) {
	fs.BoolVar(dryRun, "dry-run", false, "compute the result and diff without writing")
	fs.StringVar(form, flagDiff, string(def), "how much diff to give: auto (a summary for a created file, the unified diff otherwise), full or summary (counts only)")
	fs.Int(config.FlagDiffBasisMaxBytes, config.DefaultDiffBasisMaxBytes, "largest old content to diff against")
	fs.Int(config.FlagDiffMaxBytes, config.DefaultDiffMaxBytes, "largest diff text to print")
	fs.Int(config.FlagDiffContext, config.DefaultDiffContext, "lines of context in the diff")
	config.MarkSetting(fs, config.FlagDiffBasisMaxBytes, config.FlagDiffMaxBytes, config.FlagDiffContext)
}
