package cli

import (
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/request"
)

// exec is the call's execution of typed requests: its fence, with the
// bounds of its settings.
// Inside an exec session it remembers its reads at the session's
// supervisor (sessionMemory).
func (c *call) exec() *request.Exec {
	s := c.settings
	x := request.New(c.fence, request.Bounds{
		ReadMaxLines: s.ReadMaxLines,
		ReadMaxBytes: s.ReadMaxBytes,
		Diff:         diff.Options{Context: s.DiffContext, BasisMaxBytes: s.DiffBasisMaxBytes, MaxBytes: s.DiffMaxBytes},
	})
	if m := c.sessionMemory(); m != nil {
		x.Remember(m)
	}
	return x
}

// beginRequest begins the call of op on path, as beginWith does, and
// resolves path through the call's Exec, recording it in the header
// (failure or not) before the command reads its request's inputs: the
// request's run then takes that same target.
func (a *App) beginRequest(p PolicyFlags, op, path string) (*call, *request.Exec, error) {
	call, err := a.beginWith(p, op, path)
	if err != nil {
		return nil, nil, err
	}
	x := call.exec()
	t, err := x.Resolve(path)
	a.current.Resolved = t.Path
	return call, x, err
}
