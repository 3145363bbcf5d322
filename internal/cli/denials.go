package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// DenialsOptions are the inputs of denials.
type DenialsOptions struct {
	App *App
	// Policy holds the policy flags, for beginWith.
	Policy PolicyFlags

	// Paths are the paths to explain: what refuses a write and a read
	// there in the session's shell.
	Paths []string
}

// NewCmdDenials returns the denials command; runF replaces denialsRun in
// tests.
func NewCmdDenials(app *App, runF func(*DenialsOptions) error) *cobra.Command {
	opts := &DenialsOptions{App: app}
	return &cobra.Command{
		Use:        "denials [PATH...]",
		SuggestFor: []string{"denied", "refusals", "why"},
		Short:      "List what the session refused, and explain what refuses PATH in its shell",
		Long: `Inside a dsh-fs exec session, list what its supervisor refused: connections
the network proxy refused and escalated calls the broker refused, each once
with a count, naming the host or path, the layer and rule, whether an
escalation could lift it and what would for good. The shell's own refusals
("Read-only file system", "Device or resource busy", "Permission denied",
an empty file where a deny_read file is hidden) are the kernel's, which the
supervisor does not see: name the PATH and denials explains, as stat does,
the layer and rule that refuse a write and a read there.`,
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
	Session   bool              `json:"session"`
	Entries   []denials.Entry   `json:"entries"`
	Dropped   int               `json:"dropped,omitempty"`
	Explained []denialExplained `json:"explained,omitempty"`
}

// denialExplained is what the shell meets doing op at a path: the layer
// and rule that refuse it, or that nothing does.
type denialExplained struct {
	Path       string `json:"path"`
	Resolved   string `json:"resolved"`
	Op         string `json:"op"`
	Layer      string `json:"layer"`
	Rule       string `json:"rule"`
	Escalation string `json:"escalation"`
	WayForward string `json:"way_forward,omitempty"`
}

func denialsRun(opts *DenialsOptions) error {
	call, err := opts.App.beginWith(opts.Policy, "denials", "")
	if err != nil {
		return err
	}
	res := &DenialsResult{Entries: []denials.Entry{}}
	if s := call.settings; s.Session != nil {
		f, err := denials.Read(s.SessionPath, sandbox.OwnerTrusted)
		if err != nil {
			return fserr.Wrap(fserr.IO, "denials: the session's log: "+err.Error(), err)
		}
		res.Session, res.Entries, res.Dropped = true, f.Entries, f.Dropped
	}
	for _, p := range opts.Paths {
		t, err := call.fence.Resolve(p)
		var de *sandbox.DeniedError
		if err != nil && !errors.As(err, &de) {
			return err
		}
		res.Explained = append(res.Explained, explainWrite(call.settings, call.fence, t), explainRead(call.settings, call.fence, t))
	}
	return call.print(res)
}

// explainWrite says what the shell meets writing at t, as stat does.
func explainWrite(s *config.Settings, f *sandbox.Fence, t sandbox.Target) denialExplained {
	v := f.WriteVerdict(t)
	rule, forward := shellAccess(s, t, v)
	e := denialExplained{Path: t.Given, Resolved: t.Path, Op: "write", Layer: "none", Rule: rule, Escalation: "no", WayForward: forward}
	if v.Reason == "" {
		return e
	}
	e.Layer = writeLayer(s, t, v)
	p := s.Policy
	if v.Needed != "" && !v.Needed.Wider(p.MaxMode) && p.Approval != sandbox.ApprovalNever {
		e.Escalation = fmt.Sprintf("for one change through the file tool: dsh-fs write %s --escalate %s, which the approval (%s) decides; no escalation widens the shell", t.Given, v.Needed, p.Approval)
	}
	return e
}

// writeLayer names the layer that refuses the shell's write at t (the
// fence's verdict v), as the session's record describes its layers.
func writeLayer(s *config.Settings, t sandbox.Target, v sandbox.Verdict) string {
	rec := s.Session
	switch {
	case rec == nil:
		return "file tool (no session: the shell is not fenced)"
	case v.Reason == sandbox.ReasonProtected:
		if m := rec.Shell.Mounts; m != nil && slices.ContainsFunc(m.ReadOnly, func(p string) bool { return sandbox.Beneath(p, t.Path) }) {
			return "mount (read-only bind)"
		}
		return "file tool (the shell may write it)"
	case rec.Shell.OutsideReadOnlyHeld:
		return "mount (read-only tree)"
	case rec.Shell.Landlock > 0:
		return "landlock"
	}
	return "none"
}

// explainRead says what the shell meets reading t: deny_read hides it,
// or nothing refuses it.
func explainRead(s *config.Settings, f *sandbox.Fence, t sandbox.Target) denialExplained {
	e := denialExplained{Path: t.Given, Resolved: t.Path, Op: "read", Layer: "none", Rule: "readable: nothing refuses a read there", Escalation: "no"}
	var de *sandbox.DeniedError
	if !errors.As(f.CheckRead("read", t), &de) {
		return e
	}
	e.Layer, e.Rule = "file tool (no session: the shell is not fenced)", "deny_read ("+de.Matched+")"
	if s.Session != nil {
		e.Layer = "file tool (no mount layer: the shell reads it)"
		if s.Session.Shell.Mounts != nil {
			e.Layer = "mount (hidden)"
			e.Rule += ": the shell finds it empty where it existed when the session started; a file created since is not hidden from the shell"
		}
	}
	e.WayForward = "no escalation lifts it; for good, a person removes " + de.Matched + " from deny_read in a trusted config"
	return e
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
