package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// McpOptions are the options of dsh-fs mcp.
type McpOptions struct {
	App     *App
	Command *cobra.Command

	// Dirs are the allowed folders: the first is the session cwd, the
	// others extra writable roots.
	Dirs []string
}

// NewCmdMcp returns the mcp command: an MCP server over stdio whose
// policy is loaded once, at start, from the trusted sources and its own
// command line (docs/design.md §2.1, §5).
func NewCmdMcp(app *App, runF func(*McpOptions) error) *cobra.Command {
	opts := &McpOptions{App: app}
	c := &cobra.Command{
		Use:   "mcp [DIR...]",
		Short: "Serve the file tools over the Model Context Protocol (stdio), behind the same fence",
		Long: `mcp serves dsh-fs's operations to an MCP client over stdin and stdout: the
official filesystem server's tools (read_text_file, write_file, edit_file, move_file…),
under the same names and arguments, and dsh_read, dsh_write, dsh_edit, dsh_ls,
dsh_stat and dsh_policy with the CLI's JSON results.

The harness's config writes this command line, not the model, so its flags and
DIRs are a trusted source (origin command-line), capped by the managed
requirements. DIR arguments are the allowed folders: the first is the session
cwd (the base of relative paths), and in workspace-write mode each is a
writable root. The policy is loaded once; every tool call still goes through
its own fence and the confined handles. --mode read-only registers no tool that
mutates.`,
		Example: `  dsh-fs mcp /path/to/project
  dsh-fs mcp --mode read-only /path/to/project /path/to/docs
  dsh-fs mcp --tmp=false /path/to/project`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command, opts.Dirs = c, args
			if runF != nil {
				return runF(opts)
			}
			return mcpRun(opts)
		},
	}
	c.Flags().Int(config.FlagDiffBasisMaxBytes, config.DefaultDiffBasisMaxBytes, "largest old content to diff against")
	c.Flags().Int(config.FlagDiffMaxBytes, config.DefaultDiffMaxBytes, "largest diff text to give")
	c.Flags().Int(config.FlagDiffContext, config.DefaultDiffContext, "lines of context in the diff")
	config.MarkSetting(c.Flags(), config.FlagDiffBasisMaxBytes, config.FlagDiffMaxBytes, config.FlagDiffContext)
	return c
}

func mcpRun(opts *McpOptions) error {
	a, flags := opts.App, opts.Command.Flags()
	if to, _ := flags.GetString(config.FlagEscalate); to != "" {
		return fserr.New(fserr.InvalidArgument, "--escalate applies to one call of the CLI, not to a server")
	}
	if len(opts.Dirs) > 0 {
		if flags.Changed(config.FlagCwd) {
			return fserr.New(fserr.InvalidArgument, "give the allowed folders as DIR arguments or --cwd, not both")
		}
		if err := flags.Set(config.FlagCwd, opts.Dirs[0]); err != nil {
			return err
		}
		for _, d := range opts.Dirs[1:] {
			if err := flags.Set(config.FlagWritableRoot, d); err != nil {
				return err
			}
		}
	}
	a.started = true
	a.current = header{Op: "mcp"}
	s, err := config.Load(config.Source{Flags: flags, LookupEnv: a.LookupEnv, Locations: a.Locations, FlagsTrusted: true})
	if err != nil {
		return err
	}
	// A server's heap is small and lives long; collecting it at every
	// doubling cost a warm small call about a seventh of its time.
	debug.SetGCPercent(400)
	srv, m := newMcpServer(s, opts.Dirs)
	if s.Policy.Mode != sandbox.ReadOnly {
		// At the first mutating call, before its write restricts this
		// process for good (beginMutation): a server that only reads
		// never starts one, and the first answer never waits for it.
		var mu sync.Mutex
		started := false
		m.startElsewhere = func() {
			mu.Lock()
			defer mu.Unlock()
			if !started {
				started = true
				var why string
				m.elsewhere, why = startElsewhere(a, s, m.clientApproved)
				m.noGrant = mcpNoGrant(s.Policy.Approval, why)
			}
		}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if m.elsewhere != nil {
				m.elsewhere.stop()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &mcp.IOTransport{Reader: io.NopCloser(a.Stdin), Writer: nopWriteCloser{a.Stdout}}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fserr.Wrap(fserr.IO, "mcp: "+err.Error(), err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
