package fsops

// The one file of this package that uses dsh-fs's internal packages: each
// operation is one call as the command makes it, a fence from the
// settings the sandbox loaded (whose kernel layer is off: see
// sandbox.Sandbox.RestrictProcess) and the operation's typed request run
// under it (internal/request), its result handed back in this package's
// types through the command's own JSON.

import (
	"bytes"
	"encoding/json"

	idiff "github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	ifsops "github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/search"
	"github.com/dshfs/dsh-fs/pkg/internal/handoff"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// begin starts one call under sb as every front end starts one
// (request.Begin): its own fence, with the bounds of the sandbox's
// settings, asking for no escalation.
func begin(sb *sandbox.Sandbox) (*request.Exec, error) {
	s, err := handoff.Settings(sb)
	if err != nil {
		return nil, err
	}
	return request.Begin(request.Start{Policy: s.Policy, Bounds: s.Bounds()})
}

// run carries out r under sb and gives its result as a *T, a type of
// this package with the fields of the command's JSON result.
func run[T any](sb *sandbox.Sandbox, r request.Request) (*T, error) {
	x, err := begin(sb)
	if err != nil {
		return nil, err
	}
	res, err := x.Run(r)
	if err != nil {
		return nil, err
	}
	return public[T](res)
}

// public copies an internal result into its public type through the JSON
// the command prints, which both describe field for field
// (TestResultsMatchTheCommand).
func public[T any](res any) (*T, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "result: "+err.Error(), err)
	}
	out := new(T)
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); err != nil {
		return nil, fserr.Wrap(fserr.IO, "result: "+err.Error(), err)
	}
	return out, nil
}

func read(sb *sandbox.Sandbox, path string, opt ReadOptions) (*ReadResult, error) {
	r := request.Read{Path: path, Offset: opt.Offset, MaxBytes: opt.MaxBytes}
	if opt.Limit != 0 {
		r.Limit = &opt.Limit
	}
	return run[ReadResult](sb, r)
}

func write(sb *sandbox.Sandbox, path string, content []byte, opt WriteOptions) (*WriteResult, error) {
	return run[WriteResult](sb, request.Write{Path: path, Content: content, Mkdir: opt.Mkdir, Overwrite: opt.Overwrite,
		Mutation: request.Mutation{IfMatch: opt.IfMatch, DryRun: opt.DryRun}})
}

func edit(sb *sandbox.Sandbox, path string, edits []Replacement, opt EditOptions) (*EditResult, error) {
	in := make([]ifsops.Replacement, len(edits))
	for i, e := range edits {
		in[i] = ifsops.Replacement(e)
	}
	return run[EditResult](sb, request.Edit{Path: path, Edits: in, Mutation: request.Mutation{IfMatch: opt.IfMatch, DryRun: opt.DryRun}})
}

// applyPatch gives the diffs as the command's patch does by default: a
// summary, since the patch itself is the diff.
func applyPatch(sb *sandbox.Sandbox, patch []byte, opt PatchOptions) (*PatchResult, error) {
	return run[PatchResult](sb, request.Patch{Patch: patch, IfMatch: opt.IfMatch, DryRun: opt.DryRun, Diff: string(idiff.FormSummary)})
}

func list(sb *sandbox.Sandbox, path string, opt ListOptions) (*ListResult, error) {
	return run[ListResult](sb, request.List{Path: path, All: opt.All, Recursive: opt.Recursive, Depth: opt.Depth,
		Limit: orDefault(opt.Limit, ifsops.DefaultListLimit)})
}

func stat(sb *sandbox.Sandbox, path string) (*StatResult, error) {
	return run[StatResult](sb, request.Stat{Path: path})
}

func mkdir(sb *sandbox.Sandbox, path string, opt MkdirOptions) (*MkdirResult, error) {
	return run[MkdirResult](sb, request.Mkdir{Path: path, Parents: opt.Parents, DryRun: opt.DryRun})
}

func move(sb *sandbox.Sandbox, src, dst string) (*MoveResult, error) {
	return run[MoveResult](sb, request.Move{Source: src, Destination: dst})
}

func remove(sb *sandbox.Sandbox, path string) (*RemoveResult, error) {
	return run[RemoveResult](sb, request.Remove{Path: path})
}

func grep(sb *sandbox.Sandbox, pattern string, paths []string, opt GrepOptions) (*GrepResult, error) {
	return run[GrepResult](sb, request.Grep{Pattern: pattern, Paths: paths, Fixed: opt.Fixed, IgnoreCase: opt.IgnoreCase,
		Context: opt.Context, Files: opt.Files, Count: opt.Count,
		Limit:        orDefault(opt.Limit, search.DefaultGrepLimit),
		MaxBytes:     orDefault(opt.MaxBytes, search.DefaultSearchMaxBytes),
		MaxLineBytes: orDefault(opt.MaxLineBytes, search.DefaultMaxLineBytes),
		Walk:         request.Walk{NoIgnore: opt.NoIgnore, Globs: opt.Globs, After: opt.After}})
}

func find(sb *sandbox.Sandbox, glob, path string, opt FindOptions) (*FindResult, error) {
	return run[FindResult](sb, request.Find{Glob: glob, Path: path, Type: opt.Type,
		Limit:    orDefault(opt.Limit, search.DefaultFindLimit),
		MaxBytes: orDefault(opt.MaxBytes, search.DefaultSearchMaxBytes),
		Sort:     opt.Sort, Reverse: opt.Reverse, Lines: opt.Lines,
		Walk: request.Walk{NoIgnore: opt.NoIgnore, After: opt.After}})
}

// orDefault is a bound as the command's flag gives it: def, the flag's
// default, where the option left it 0.
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}
