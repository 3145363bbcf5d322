package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/fserr"
)

// AuditOptions are the inputs of audit verify.
type AuditOptions struct {
	App *invocation

	// File is the audit log to check.
	File string
	// Head, when set, is a hash kept elsewhere that the log must hold
	// (audit.Verify).
	Head string
}

// NewCmdAudit returns the audit command and its verify; runF replaces
// auditVerifyRun in tests.
func NewCmdAudit(app *invocation, runF func(*AuditOptions) error) *cobra.Command {
	c := &cobra.Command{
		Use:     "audit",
		Short:   "Check the audit log dsh-fs exec sessions write (audit_log)",
		Example: `  dsh-fs audit verify /var/log/dsh-fs/audit.jsonl`,
		Args:    cobra.NoArgs,
	}
	opts := &AuditOptions{App: app}
	verify := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check an audit log's chain: find a line removed, changed or moved",
		Long: `verify reads the audit log FILE (the trusted audit_log of dsh-fs exec) and
checks that each line has the hash of its own bytes, the next sequence number
and the hash of the line before it. The first line at fault fails the check
with FS_AUDIT_BROKEN (exit 1), its number in the message and in detail.line.
On success it prints the number of lines and the head: the last line's hash.

The chain cannot tell a log cut short at its end, or one written anew from
its first line, from a true one. Keep the head elsewhere (where the sessions
cannot write) and give it back with --head: a log that no longer holds a line
of that hash fails.`,
		Example: `  dsh-fs audit verify ~/.local/state/dsh-fs/audit.jsonl
  dsh-fs audit verify /var/log/dsh-fs/audit.jsonl --head 3f2a…   # the head kept at the last check`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return auditVerifyRun(opts)
		},
	}
	verify.Flags().StringVar(&opts.Head, "head", "", "a head kept from an earlier check: the log must still hold that line")
	c.AddCommand(verify)
	return c
}

// auditVerifyRun checks the log and prints what it found.
func auditVerifyRun(opts *AuditOptions) error {
	app := opts.App
	app.beginStatic("audit verify")
	app.current.Path = opts.File
	f, err := os.Open(opts.File)
	if err != nil {
		return fserr.FromOS("audit verify", opts.File, err)
	}
	defer f.Close()
	v, err := audit.Verify(f, opts.File, opts.Head)
	if err != nil {
		return err
	}
	if app.text {
		_, err := fmt.Fprintf(app.Stdout, "%s: %d lines, %d sessions, the chain holds; head %s\n", opts.File, v.Lines, v.Sessions, v.Head)
		return err
	}
	return app.printStatic(v)
}
