package cli

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// call is one command's run once its policy is loaded: its settings,
// its Exec and fence, and the escalation it asks for.
type call struct {
	app      *invocation
	settings *config.Settings
	// x runs the call's typed requests under its fence (x.Fence()).
	x     *request.Exec
	fence *sandbox.Fence
	// escalate is the mode the call asks for with --escalate, "" for
	// none; forwarded says the session's supervisor carries it out
	// (brokerEscalation), once its inputs are read.
	escalate  string
	forwarded bool
	// reason is --reason, forwarded with the call.
	reason string
}

// escalationContext is where the call comes from, for its approver: the
// session of its record, its working directory, the command line the
// session's supervisor read (a call it carries out), the model's reason.
func escalationContext(s *config.Settings, p PolicyFlags) policy.EscalationContext {
	wd, _ := os.Getwd()
	return policy.EscalationContext{Session: s.Session.ID(), Cwd: wd, Caller: p.Caller, ModelReason: p.Reason}
}

// PolicyFlags are what a command line says of a call's policy, as its
// command's RunE took them from cobra: the flags config.Load reads and
// the escalation asked for. A run function hands them to beginWith and
// never looks at cobra itself.
type PolicyFlags struct {
	// Settings is the command's parsed flag set, the shared policy flags
	// included; config.Load reads the flags marked as settings
	// (config.MarkSetting) and whether each was given.
	Settings *pflag.FlagSet
	// Escalate is the mode --escalate asks for, "" for none. It is
	// parsed once the settings are loaded, so that a settings error
	// comes first, as it always has.
	Escalate string
	// Reason is --reason: why the model says it needs the escalation.
	Reason string
	// Caller is the calling command line of a call the session's
	// supervisor carries out, as it read it (session.Request.Caller).
	Caller []string
}

// policyFlagsOf takes the policy flags from c's parsed command line.
func policyFlagsOf(c *cobra.Command) PolicyFlags {
	to, _ := c.Flags().GetString(config.FlagEscalate)
	reason, _ := c.Flags().GetString(flagReason)
	return PolicyFlags{Settings: c.Flags(), Escalate: to, Reason: reason}
}

// beginWith starts the call of op on path: it loads the settings from
// the policy flags p, the environment and the config file, and starts
// the call as every front end does (request.Begin), with the escalation
// p asks for, the approver's context and, inside a session, where the
// escalation is carried out (brokerEscalation).
func (a *invocation) beginWith(p PolicyFlags, op, path string) (*call, error) {
	a.started = true
	a.current = result.Header{Op: op, Path: path}
	s, err := config.Load(config.Source{Flags: p.Settings, Locations: a.Locations})
	if err != nil {
		var de *policy.DeniedError
		if errors.As(err, &de) {
			de.Op, de.Path = op, path
		}
		return nil, err
	}
	a.pretty = a.StdoutTTY && s.Output == "json"
	a.text = s.Output == "text"
	a.current.Mode = string(s.Policy.Mode)
	start := request.Start{Policy: s.Policy, Bounds: s.Bounds(), Escalate: p.Escalate, Reason: p.Reason,
		Names: request.Names{Escalate: "--" + config.FlagEscalate, Reason: "--" + flagReason}}
	cl := &call{app: a, settings: s}
	start.Memory = cl.sessionMemory()
	if p.Escalate != "" {
		start.Approver.Context = escalationContext(s, p)
		cl.escalate, cl.reason = p.Escalate, p.Reason
		cl.forwarded = a.brokerEscalation(op, s, &start.Approver)
	}
	x, err := request.Begin(start)
	cl.x, cl.fence = x, x.Fence()
	a.fence = cl.fence
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// beginRequest begins the call of op on path, as beginWith does, and
// resolves path through the call's Exec, recording it in the header
// (failure or not) before the command reads its request's inputs: the
// request's run then takes that same target.
func (a *invocation) beginRequest(p PolicyFlags, op, path string) (*call, *request.Exec, error) {
	call, err := a.beginWith(p, op, path)
	if err != nil {
		return nil, nil, err
	}
	x := call.x
	t, err := x.Resolve(path)
	a.current.Resolved = t.Path
	return call, x, err
}

// beginStatic starts a call that needs no policy (version, tools): its
// result has no path and an empty mode.
func (a *invocation) beginStatic(op string) {
	a.started = true
	a.current = result.Header{Op: op}
}

// printStatic prints the success result of a call begun with beginStatic.
func (a *invocation) printStatic(result any) error {
	h := a.current
	h.OK = true
	return printJSON(a, h, result)
}

// print writes the success result, as JSON or, with --output text, for
// people.
func (c *call) print(result any) error {
	h := c.app.current
	h.OK = true
	h.Mode = string(c.fence.Mode())
	h.Escalated = c.fence.Escalated()
	if c.app.text {
		return c.app.textOut().Result(h, result)
	}
	return printJSON(c.app, h, result)
}

// printJSON writes a success result: the header followed by result's own
// fields, one JSON object with keys in a fixed order.
func printJSON(app *invocation, h result.Header, res any) error {
	out, err := result.JSON(h, res)
	if err != nil {
		return err
	}
	return result.Encode(app.Stdout, out, app.pretty)
}

// readSource reads the whole of the source the flag of op names: stdin
// for "-", or a file, read as any read is (deny_read applies, and it
// must be a regular file).
func (c *call) readSource(stdin io.Reader, op, flag, name string) ([]byte, error) {
	src := stdin
	if name != "-" {
		file, err := fsops.OpenSource(c.fence, op+" "+flag, name)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		src = file
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, fserr.FromOS(op+": "+flag, name, err)
	}
	return data, nil
}
