package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/result"
)

// McpOptions are the options of dsh-fs mcp.
type McpOptions struct {
	App     *invocation
	Command *cobra.Command

	// Dirs are the allowed folders: the first is the session cwd, the
	// others extra writable roots.
	Dirs []string
}

// NewCmdMcp returns the mcp command: an MCP server over stdio whose
// policy is loaded once, at start, from the trusted sources and its own
// command line (docs/design.md §2.1, §5).
func NewCmdMcp(app *invocation, runF func(*McpOptions) error) *cobra.Command {
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
mutates.

The server is dsh-fs-mcp, installed beside dsh-fs (only it links the MCP SDK):
mcp replaces itself with it, keeping the same arguments and pipes.`,
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
	if a.ServeMCP == nil {
		return execMCPServer(a)
	}
	if to, _ := flags.GetString(config.FlagEscalate); to != "" {
		return fserr.New(fserr.InvalidArgument, "--escalate applies to one call of the CLI, not to a server")
	}
	if len(opts.Dirs) > 0 {
		dirs, err := mcpFolders(a, opts.Dirs)
		if err != nil {
			return err
		}
		opts.Dirs = dirs
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
	a.current = result.Header{Op: "mcp"}
	s, err := config.Load(config.Source{Flags: flags, LookupEnv: a.LookupEnv, Locations: a.Locations, FlagsTrusted: true})
	if err != nil {
		return err
	}
	err = a.ServeMCP(s, opts.Dirs)
	// Standard output carried JSON-RPC: a failure of the server itself
	// is said on standard error.
	a.Stdout = a.Stderr
	return err
}

// mcpFolders are the DIR arguments of dsh-fs mcp that are folders, as
// the official filesystem server takes them: "~" and "~/x" in the home
// folder of the user database (never $HOME, as every trusted setting's
// "~"), and each one missing or not a folder skipped with a message on
// standard error, the first one too. When none is left the server does
// not start, as the official one exits then (docs/mcp.md).
func mcpFolders(a *invocation, given []string) ([]string, error) {
	home := ""
	if a.Locations.Home != nil {
		if h, err := a.Locations.Home(); err == nil && filepath.IsAbs(h) {
			home = filepath.Clean(h)
		}
	}
	var dirs []string
	for _, d := range given {
		if home != "" && (d == "~" || strings.HasPrefix(d, "~/")) {
			d = home + d[1:]
		}
		fi, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(a.Stderr, "dsh-fs mcp: skipping %s: no such folder\n", d)
		case err != nil && errors.Is(err, syscall.ENOTDIR):
			fmt.Fprintf(a.Stderr, "dsh-fs mcp: skipping %s: not a folder\n", d)
		case err != nil:
			fmt.Fprintf(a.Stderr, "dsh-fs mcp: skipping %s: %v\n", d, err)
		case !fi.IsDir():
			fmt.Fprintf(a.Stderr, "dsh-fs mcp: skipping %s: not a folder\n", d)
		default:
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		e := fserr.New(fserr.NotFound, "mcp: none of the folders given is a folder: "+strings.Join(given, ", "))
		e.Hint = "give at least one folder that exists"
		return nil, e
	}
	return dirs, nil
}

// MCPServer serves MCP over the App's standard input and output (the
// main that links it in gives it them), under the settings s loaded at
// start; dirs are the allowed folders as given.
type MCPServer func(s *config.Settings, dirs []string) error

// MCPBinary is the executable that serves dsh-fs mcp, installed beside
// dsh-fs: it links the MCP SDK, which every CLI call would otherwise carry
// (a fifth of a small call's time; docs/design.md §5).
const MCPBinary = "dsh-fs-mcp"

// execMCPServer replaces this process with MCPBinary from beside this
// executable, given the same arguments, so the client's pipes, the pid it
// started and a dsh-fs exec session's channel all carry over. It returns
// only if that fails.
func execMCPServer(a *invocation) error {
	a.started = true
	a.current = result.Header{Op: "mcp"}
	self, err := os.Executable()
	if err != nil {
		return fserr.Wrap(fserr.IO, "mcp: cannot find this executable: "+err.Error(), err)
	}
	return handOver(a, self)
}

// handOver is execMCPServer from the executable self.
func handOver(a *invocation, self string) error {
	if filepath.Base(self) == MCPBinary {
		// Built without its server: handing over to itself would never end.
		return fserr.New(fserr.IO, "mcp: "+self+" was built without the MCP server")
	}
	bin := filepath.Join(filepath.Dir(self), MCPBinary)
	err := replaceWith(bin, append([]string{MCPBinary}, a.args...))
	fe := fserr.Wrap(fserr.CodeOf(err), "mcp: cannot run "+bin+": "+err.Error(), err)
	if errors.Is(err, fs.ErrNotExist) {
		fe.Hint = "dsh-fs mcp runs " + MCPBinary + " from the folder dsh-fs is in; install both from one clone: go install . ./cmd/" + MCPBinary
	}
	return fe
}
