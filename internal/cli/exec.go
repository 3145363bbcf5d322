package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
)

// ExecOptions are the options of dsh-fs exec.
type ExecOptions struct {
	App *invocation
	// Policy holds exec's flags, its --config the session's trusted file,
	// and --escalate, which exec refuses.
	Policy PolicyFlags

	// Argv is the command the session runs, its program first.
	Argv []string
}

// NewCmdExec returns the exec command: the agent's shell (or any command)
// under the same policy as the file tool, pinned for every call inside and
// enforced on the whole process tree by the kernel (docs/design.md §10).
func NewCmdExec(app *invocation, runF func(*ExecOptions) error) *cobra.Command {
	opts := &ExecOptions{App: app}
	c := &cobra.Command{
		Use:   "exec [flags] [--] CMD [ARG...]",
		Short: "Run the agent's shell under the same policy, enforced by the kernel, with brokered escalation",
		Long: `exec runs CMD (the agent's shell) as a session of the policy: it resolves the
policy once, from the trusted sources and its own command line (the harness or
person who types this line is trusted; the managed requirements still cap it),
pins it in a session record the session cannot write (DSH_FS_SESSION), and
restricts CMD's whole process tree with Landlock: writes only beneath the
writable roots and to the terminal and /dev/null-like devices. In a private
mount namespace (as root, or in a user namespace that maps only this user) it
also makes everything outside the writable roots read-only (metadata too),
binds the protected paths (.git/config, .git/hooks, .vscode…) read-only and
hides deny_read paths; the rest of .git stays writable, so git commits.
CMD starts in the workspace root (--cwd).

--config FILE is this session's own trusted file, read after the user's and
capped by the managed requirements: a harness gives each session its own
policy (an approver of its own). It is held to the rules of a trusted file.
Inside a session, --config (a nested exec's too) only narrows.

Every dsh-fs call inside takes the pinned policy as its trusted base. A call
with --escalate is sent to this supervisor over an inherited socket; the
trusted approval (the person at this terminal by default) decides, and the one
approved operation runs outside the kernel layer. Where a trusted audit_log
names a file, this supervisor appends one hash-chained line per event to it
(the start, each escalation asked and answered, each brokered call, each
network decision, the end); dsh-fs audit verify checks it.

exec passes CMD's exit status through (128+N when a signal N ended it) and
forwards the signals it receives.`,
		Example: `  dsh-fs exec --cwd ~/proj -- bash
  dsh-fs exec --cwd ~/proj --config ~/.config/my-harness/session-1.yaml -- bash
  dsh-fs exec --mode read-only -- sh -c 'make test'
  dsh-fs exec --cwd ~/proj -- go test ./...   # the caches copy-on-write, discarded at the end`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Argv = policyFlagsOf(c), args
			if runF != nil {
				return runF(opts)
			}
			return execRun(opts)
		},
	}
	// Everything after CMD is CMD's own: `dsh-fs exec sh -c x`.
	c.Flags().SetInterspersed(false)
	// exec's own --config, in place of the shared one, says what it is
	// here: the session's trusted file (config.Source.ConfigTrusted).
	c.Flags().String(config.FlagConfig, "", "this session's own trusted config file, after the user's and capped by the managed requirements (inside a session: only narrows)")
	return c
}

// exitWith is a run's exit status passed through without a result of its
// own: CMD's under exec, the supervisor's for a forwarded call.
type exitWith int

func (e exitWith) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// execRun resolves the session's settings from exec's flags, with exec's
// command line trusted, and hands the session to internal/session/supervisor.
func execRun(opts *ExecOptions) error {
	a := opts.App
	if opts.Policy.Escalate != "" {
		return fserr.New(fserr.InvalidArgument, "--escalate applies to one call, not to a session")
	}
	a.started = true
	a.current = result.Header{Op: "exec"}
	// Where no session can run at all (Windows), exec says so before it
	// reads any setting: what to do does not depend on them.
	if err := supervisor.Unavailable(); err != nil {
		return err
	}
	// exec --config FILE is the harness's trusted base for this session
	// (docs/design.md §10); inside a session it only narrows.
	s, err := config.Load(config.Source{Flags: opts.Policy.Settings, LookupEnv: a.LookupEnv, Locations: a.Locations, FlagsTrusted: true, ConfigTrusted: true})
	if err != nil {
		var de *policy.DeniedError
		if errors.As(err, &de) {
			de.Op = "exec"
		}
		return err
	}
	a.current.Mode = string(s.Policy.Mode)
	status, err := supervisor.Run(supervisor.Options{Stdin: a.Stdin, Stdout: a.Stdout, Stderr: a.Stderr, LookupEnv: a.LookupEnv,
		Settings: s, Argv: opts.Argv})
	if err != nil {
		return err
	}
	return exitWith(status)
}
