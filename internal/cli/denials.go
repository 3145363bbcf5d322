package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// DenialsOptions are the inputs of denials.
type DenialsOptions struct {
	App *invocation
	// Policy holds the policy flags, for beginWith.
	Policy PolicyFlags

	// Paths are the paths to explain: what refuses a write and a read
	// there in the session's shell.
	Paths []string
}

// NewCmdDenials returns the denials command; runF replaces denialsRun in
// tests.
func NewCmdDenials(app *invocation, runF func(*DenialsOptions) error) *cobra.Command {
	opts := &DenialsOptions{App: app}
	return &cobra.Command{
		Use:        "denials [PATH...]",
		SuggestFor: []string{"denied", "refusals", "why"},
		Short:      "List what the session refused, and explain what refuses PATH in its shell",
		Long: `Inside a dsh-fs exec session, list what its supervisor refused or saw
refused: connections the network proxy refused, escalated calls the broker
refused, and refusals a command in the shell printed ("Read-only file
system", "Device or resource busy", "Permission denied" about a path, in
the session's terminal or in exec's standard error where it is a pipe)
where the session's policy causes them there (layer shell). Each is listed
once with a count, naming the host or path, the layer and rule, whether an
escalation could lift it and what would for good. With explain_denials:
inline (the default) the supervisor also writes one line after such a
refusal, once per path; log keeps the entries only, off neither. Name a
PATH and denials explains, as stat does, the layer and rule that refuse a
write and a read there (an empty file where a deny_read file is hidden is
no refusal the shell prints).`,
		Example: `  dsh-fs denials
  dsh-fs denials .git/config /etc/hosts   # what refuses a write or a read there, and why`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Paths = policyFlagsOf(c), args
			if runF != nil {
				return runF(opts)
			}
			return denialsRun(opts)
		},
	}
}

// DenialsResult is the result of denials: the session's log, and the
// explanation of each path asked about.
type DenialsResult struct {
	// Session says the call runs in a dsh-fs exec session, which alone
	// keeps a log.
	Session   bool                   `json:"session"`
	Entries   []denials.Entry        `json:"entries"`
	Dropped   int                    `json:"dropped,omitempty"`
	Explained []policyview.Explained `json:"explained,omitempty"`
}

func denialsRun(opts *DenialsOptions) error {
	call, err := opts.App.beginWith(opts.Policy, "denials", "")
	if err != nil {
		return err
	}
	res := &DenialsResult{Entries: []denials.Entry{}}
	if s := call.settings; s.Session != nil {
		f, err := denials.Read(s.SessionPath, trust.OwnerTrusted)
		if err != nil {
			return fserr.Wrap(fserr.IO, "denials: the session's log: "+err.Error(), err)
		}
		res.Session, res.Entries, res.Dropped = true, f.Entries, f.Dropped
	}
	for _, p := range opts.Paths {
		t, err := call.fence.Resolve(p)
		var de *policy.DeniedError
		if err != nil && !errors.As(err, &de) {
			return err
		}
		s := call.settings
		res.Explained = append(res.Explained, policyview.ExplainWrite(s.Policy, s.Session, call.fence, t), policyview.ExplainRead(s.Session, call.fence, t))
	}
	return call.print(res)
}

// WriteText renders r for people: one line per entry and per path.
func (r *DenialsResult) WriteText(w io.Writer) error {
	if !r.Session {
		fmt.Fprintln(w, "no dsh-fs exec session: no log of denials")
	} else if len(r.Entries) == 0 {
		fmt.Fprintln(w, "no denials logged")
	}
	for _, e := range r.Entries {
		what := e.Path
		if e.Host != "" {
			what = e.Host
		}
		fmt.Fprintf(w, "%s %s ×%d: %s: %s; escalation: %s", e.Op, what, e.Count, e.Layer, e.Rule, e.Escalation)
		if e.WayForward != "" {
			fmt.Fprintf(w, "; %s", e.WayForward)
		}
		fmt.Fprintln(w)
	}
	if r.Dropped > 0 {
		fmt.Fprintf(w, "%d more denials not logged (the log is full)\n", r.Dropped)
	}
	for _, e := range r.Explained {
		fmt.Fprintf(w, "%s %s: %s: %s; escalation: %s", e.Op, e.Resolved, e.Layer, e.Rule, e.Escalation)
		if e.WayForward != "" {
			fmt.Fprintf(w, "; %s", e.WayForward)
		}
		fmt.Fprintln(w)
	}
	return nil
}
