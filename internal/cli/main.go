// Package cli is dsh-fs's command tree: flags, options, the choice of a
// result's form (internal/result renders it) and the one table from error
// code to exit status. It does no path logic and no file-system work of
// its own.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	// Every binary with this command tree starts with its main
	// goroutine's stack grown once.
	_ "github.com/dshfs/dsh-fs/internal/mainstack"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/version"
)

// App holds what every command needs from the process, so tests can run
// the same entry point with their own streams. It holds no call's state:
// each Run is an invocation of its own, and one App runs any number of
// calls, one after another or at once.
type App struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	StdoutTTY bool
	// LookupEnv reads the environment; nil is os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Locations are where the trusted config files are: fixed in a
	// release build (config.DefaultLocations); only a test binary sets
	// others.
	Locations config.Locations
	// ServeMCP is the MCP server, set only where it is linked in
	// (dsh-fs-mcp and the tests). Without it, dsh-fs mcp runs MCPBinary,
	// so the CLI never carries the MCP SDK.
	ServeMCP MCPServer

	// wholeTree builds every command for every call (newCmdTree builds
	// only a file command's own): for the test that the two agree.
	wholeTree bool
}

// invocation is one Run of an App: the App's dependencies, copied (a
// run may point its Stdout elsewhere), and the state of the call under
// way, for its result and its failure.
type invocation struct {
	App
	// current describes the call under way, for the failure result.
	current result.Header
	// started is set once a command's run function begins; an error
	// before that is a usage error.
	started bool
	pretty  bool
	text    bool
	// args are the call's arguments, as a forwarded call sends them.
	args []string
	// fence is the call's fence once its policy is loaded; its mode,
	// which an escalation may have widened, goes into a failure.
	fence *sandbox.Fence
}

// Main runs dsh-fs with the process's arguments and streams and returns
// the exit status. main.go calls it and nothing else.
func Main() int {
	setCallGC(os.LookupEnv)
	return NewApp(config.DefaultLocations()).Run(os.Args[1:])
}

// NewApp returns the App of this process's streams, with the trusted
// config files at loc.
func NewApp(loc config.Locations) *App {
	return &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, StdoutTTY: isTerminal(os.Stdout), LookupEnv: os.LookupEnv, Locations: loc}
}

// Run executes one call and returns its exit status. It alone prints
// errors and picks the status.
func (app *App) Run(args []string) int {
	a := &invocation{App: *app}
	// The shell's re-runs of this binary (its child, probes, the
	// brokered call, the escalator) are not commands.
	if status, ok := supervisor.Entry(args, a.brokeredCaller()); ok {
		return status
	}
	a.args = args
	a.pretty = a.StdoutTTY
	// Until the settings are loaded (and for the calls that never load
	// them), the output is what the flag or the variable asks for.
	a.text = outputAsked(args, a.LookupEnv) == "text"
	if a.ServeMCP == nil && len(args) > 0 && args[0] == "mcp" {
		// Hand over to the server before the command tree is built: a
		// server's first answer waits for this process's start. (With
		// flags before "mcp", the command's run hands over instead.)
		err := execMCPServer(a)
		a.fail(err)
		return exitStatus(fserr.CodeOf(err))
	}
	if versionOnly(args) && !a.wholeTree {
		// What the root's --version prints (versionTemplate), with no
		// tree built: a harness may ask it before every session.
		if _, err := io.WriteString(a.Stdout, version.Build().String()+"\n"); err != nil {
			a.fail(err)
			return exitStatus(fserr.CodeOf(err))
		}
		return ExitOK
	}
	root := newCmdTree(a, args)
	if a.wholeTree {
		root = newCmdRoot(a)
	}
	if err := unknownCommandAskedForHelp(root, args); err != nil {
		a.fail(usageError(root, root, err))
		return exitStatus(fserr.InvalidArgument)
	}
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	c, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var passed exitWith
	if errors.As(err, &passed) {
		return int(passed)
	}
	if !a.started {
		// Cobra's own complaints (unknown command or flag, wrong number
		// of arguments, conflicting flags) are usage errors: one result
		// with the command's one-line usage, never the usage dump.
		var coder fserr.Coder
		if !errors.As(err, &coder) || coder.Code() == fserr.InvalidArgument {
			err = usageError(c, root, err)
		}
		if a.current.Op == "" && c != root {
			a.current.Op = topCommand(c, root).Name()
		}
	}
	a.fail(err)
	return exitStatus(fserr.CodeOf(err))
}

// fail prints the failure result of the current call.
func (a *invocation) fail(err error) {
	if a.fence != nil {
		a.current.Mode = string(a.fence.Mode())
		a.current.Escalated = a.fence.Escalated()
	}
	if a.text {
		a.textOut().Failure(result.NewFailure(a.current, err))
		return
	}
	if err := result.Encode(a.Stdout, result.NewFailure(a.current, err), a.pretty); err != nil {
		fmt.Fprintln(a.Stderr, "dsh-fs:", err)
	}
}

// outputAsked is the output format of a call before its settings are
// loaded: the last --output on the command line, else DSH_FS_OUTPUT. The
// command line is scanned as pflag would read it, up to "--", since a
// usage error may stop the parse before it reaches --output.
func outputAsked(args []string, lookupEnv func(string) (string, bool)) string {
	out := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--"+config.FlagOutput+"="); ok {
			out = v
		} else if a == "--"+config.FlagOutput && i+1 < len(args) {
			out = args[i+1]
			i++
		}
	}
	if out != "" {
		return out
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return config.OutputFromEnv(lookupEnv)
}

func (a *invocation) textOut() result.Text {
	return result.Text{Out: a.Stdout, Note: a.Stderr, Color: a.StdoutTTY}
}

// topCommand is the command of the tree's first level that c belongs to:
// "completion" for "completion bash".
func topCommand(c, root *cobra.Command) *cobra.Command {
	for c.HasParent() && c.Parent() != root {
		c = c.Parent()
	}
	return c
}

// UsageLine is the usage line a failure's text shows for d
// (result.Text.Failure).
func (d UsageDetail) UsageLine() string { return d.Usage }

// callGCPercent is the garbage collector's target for a call, unless
// GOGC says otherwise: a call is short, and at Go's 100 a find of the Go
// source tree collected once for 2 MB of garbage, 4-7 % of its CPU time.
// At 200 the first collection waits for an 8 MB heap; grep's
// every-match row, the largest heap bench.sh makes, peaks at about 42 MiB
// (36 at 100), under its 64 MiB target.
const callGCPercent = 200

func setCallGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(callGCPercent)
	}
}

// unknownCommandAskedForHelp is cobra's unknown-command error for a line
// whose first word names no command but which asks for help: cobra
// answers "dsh-fs move --help" with the root's help and exit 0, while
// "dsh-fs move a b" is a usage error; both are the usage error here.
func unknownCommandAskedForHelp(root *cobra.Command, args []string) error {
	// cobra adds its completion requests (__complete) while it executes.
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" || strings.HasPrefix(args[0], "__") {
		return nil
	}
	if c, _, err := root.Find(args); err != nil || c != root {
		return nil
	}
	return fmt.Errorf("unknown command %q for %q", args[0], root.Name())
}
