package cli

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// call is one command's run: its settings, its fence and the header of its
// result.
type call struct {
	app      *App
	settings *config.Settings
	fence    *sandbox.Fence
	// escalate is the mode the call asks for with --escalate, "" for
	// none; forwarded says the session's supervisor carries it out
	// (brokerEscalation), once its inputs are read.
	escalate  sandbox.Mode
	forwarded bool
}

// begin starts the call of op on path: it loads the settings from the
// command's flags, the environment and the config file, and builds the
// fence, with the escalation asked for by --escalate.
func (a *App) begin(c *cobra.Command, op, path string) (*call, error) {
	to, _ := c.Flags().GetString(config.FlagEscalate)
	return a.beginWith(c.Flags(), op, path, to)
}

// beginWith is begin with the setting flags flags and the escalation to
// ("" for none): the brokered call has no command line of its own.
func (a *App) beginWith(flags *pflag.FlagSet, op, path, to string) (*call, error) {
	a.started = true
	a.current = result.Header{Op: op, Path: path}
	s, err := config.Load(config.Source{Flags: flags, Locations: a.Locations})
	if err != nil {
		var de *sandbox.DeniedError
		if errors.As(err, &de) {
			de.Op, de.Path = op, path
		}
		return nil, err
	}
	a.pretty = a.StdoutTTY && s.Output == "json"
	a.text = s.Output == "text"
	a.current.Mode = string(s.Policy.Mode)
	fence := sandbox.NewFence(s.Policy)
	a.fence = fence
	cl := &call{app: a, settings: s, fence: fence}
	if to != "" {
		mode, err := sandbox.ParseMode(to)
		if err != nil {
			return nil, fserr.New(fserr.InvalidArgument, "flag --escalate: "+err.Error())
		}
		approver := approval.New(s.Policy, mode)
		cl.escalate, cl.forwarded = mode, a.brokerEscalation(op, s, &approver)
		fence.SetApprover(approver)
	}
	return cl, nil
}

// beginStatic starts a call that needs no policy (version, tools): its
// result has no path and an empty mode.
func (a *App) beginStatic(op string) {
	a.started = true
	a.current = result.Header{Op: op}
}

// printStatic prints the success result of a call begun with beginStatic.
func (a *App) printStatic(result any) error {
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
func printJSON(app *App, h result.Header, res any) error {
	out, err := result.JSON(h, res)
	if err != nil {
		return err
	}
	return result.Encode(app.Stdout, out, app.pretty)
}
