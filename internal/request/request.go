// Package request is the one call path of every front end: a typed,
// JSON-serialisable request per operation (Read, Write, Edit, List, Stat,
// Grep, Find, Patch, Mkdir, Move, Remove), each with its path(s) as given and the
// operation's options, and their execution under one call's fence
// (Exec): resolve the path(s) through the fence, run the fsops
// operation, return its result struct or an error with its fserr code.
// The CLI's commands, the brokered call of a dsh-fs exec session and the
// MCP tools build these requests; none of them assembles fsops options by
// hand. It knows nothing of flags, settings files or MCP.
package request

import (
	"fmt"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The operations, as results and the broker name them.
const (
	OpRead   = "read"
	OpWrite  = "write"
	OpEdit   = "edit"
	OpList   = "ls"
	OpStat   = "stat"
	OpGrep   = "grep"
	OpFind   = "find"
	OpPatch  = "patch"
	OpMkdir  = "mkdir"
	OpMove   = "move"
	OpRemove = "rm"
)

// Request is one typed request: Read, Write, Edit, List, Stat, Grep,
// Find, Patch, Mkdir, Move or Remove (each by value). Exec.Run carries any of them
// out; each also has a Run method that returns its own result type.
type Request interface {
	// Op is the operation's name (OpRead, …), as the result's header
	// names it.
	Op() string
	run(x *Exec) (any, error)
}

// Bounds are the limits of the call's settings that shape a result: the
// front end reads them from its settings (read_max_lines, read_max_bytes,
// diff_context, diff_basis_max_bytes, diff_max_bytes).
type Bounds struct {
	// ReadMaxLines is the window of a read that gives no limit.
	ReadMaxLines int
	// ReadMaxBytes bounds the content a read returns.
	ReadMaxBytes int
	// Diff bounds every diff of a write, an edit or a patch; its Form is
	// ignored: each request says its own.
	Diff diff.Options
}

// Exec carries out requests under one call's fence. It canonicalizes
// each path once: a front end that names the resolved path before the
// inputs of its request are read (the CLI's header, even on failure)
// resolves it through Resolve first, and the request's run takes that
// same target, so the header and the fence's decisions by name agree and
// the path costs one canonicalization. (The open still walks the path as
// given and decides on what it opened, as every open of the fence does.)
// An Exec belongs to one call and one goroutine.
type Exec struct {
	fence    *sandbox.Fence
	bounds   Bounds
	resolved []resolved
	// memory is the session's memory of its reads (Remember); nil
	// remembers nothing.
	memory Memory
}

// resolved is a path Exec resolved, and whether by name.
type resolved struct {
	t    sandbox.Target
	name bool
}

// New returns the Exec of the call whose fence is f, with the bounds of
// its settings.
func New(f *sandbox.Fence, b Bounds) *Exec {
	return &Exec{fence: f, bounds: b}
}

// Fence is the call's fence.
func (x *Exec) Fence() *sandbox.Fence { return x.fence }

// Resolve canonicalizes path through the fence (sandbox.Fence.Resolve),
// or returns the target this Exec resolved for path before. On failure the
// target holds the path as given, and nothing is remembered.
func (x *Exec) Resolve(path string) (sandbox.Target, error) {
	return x.resolve(path, false)
}

// ResolveName is Resolve for an operation on the name itself, which never
// follows a final symlink (sandbox.Fence.ResolveName): a removal, a move.
func (x *Exec) ResolveName(path string) (sandbox.Target, error) {
	return x.resolve(path, true)
}

func (x *Exec) resolve(path string, name bool) (sandbox.Target, error) {
	for _, r := range x.resolved {
		if r.t.Given == path && r.name == name {
			return r.t, nil
		}
	}
	resolve := x.fence.Resolve
	if name {
		resolve = x.fence.ResolveName
	}
	t, err := resolve(path)
	if err == nil {
		x.resolved = append(x.resolved, resolved{t, name})
	}
	return t, err
}

// Run carries out r and returns its result struct (a *fsops.ReadResult
// for a Read, …).
func (x *Exec) Run(r Request) (any, error) {
	return r.run(x)
}

// diffOptions are the bounds' diff options with the form a request of op
// asks for ("" is auto).
func (x *Exec) diffOptions(op, form string) (diff.Options, error) {
	f, err := ParseDiff(op, form)
	o := x.bounds.Diff
	o.Form = f
	return o, err
}

// ParseDiff reads the diff form a request of op asks for: auto, full or
// summary ("" is auto); anything else is FS_INVALID_ARGUMENT. A front end
// that must refuse a bad form before it reads the request's inputs calls
// it first; every run checks it again.
func ParseDiff(op, form string) (diff.Form, error) {
	f, ok := diff.ParseForm(form)
	if !ok {
		return "", fserr.New(fserr.InvalidArgument, fmt.Sprintf("%s: --diff takes auto, full or summary, not %q", op, form))
	}
	return f, nil
}
