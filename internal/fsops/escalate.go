package fsops

import (
	"bytes"
	"io"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/patch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// previewWrite is what the approver of a denied write is shown
// (sandbox.Intent.Preview): the diff the write would apply, in full
// whatever the caller's --diff. The content read for it is put back in
// front of the rest of the stream, and the change is pinned to the file
// it was shown against, so a file changed after the approval is FS_STALE
// rather than a change nobody saw.
func previewWrite(f *sandbox.Fence, t sandbox.Target, opt *WriteOptions) (sandbox.Preview, error) {
	h, err := f.Look("write", t, opt.Mkdir)
	if err != nil {
		return sandbox.Preview{}, err
	}
	defer h.Close()
	content := opt.Content
	if content == nil {
		content = bytes.NewReader(nil)
	}
	limit := opt.Diff.BasisMaxBytes
	head, err := io.ReadAll(io.LimitReader(content, limit+1))
	if err != nil {
		return sandbox.Preview{}, fserr.FromOS("write: reading the content", h.Given(), err)
	}
	tooLarge := int64(len(head)) > limit
	peek := *opt
	peek.DryRun = true
	// The approver sees every line, even of a file this creates,
	// whatever --diff the caller asked for its own result.
	peek.Diff.Form = diff.FormFull
	peek.Content = bytes.NewReader(head)
	if tooLarge {
		peek.Content = bytes.NewReader(nil)
	}
	res, err := writeHeld(h, peek)
	if err != nil {
		return sandbox.Preview{}, err
	}
	d := res.Diff
	if tooLarge {
		d = diff.Omitted(diff.ReasonBasisTooLarge)
	}
	opt.Content = io.MultiReader(bytes.NewReader(head), content)
	if opt.IfMatch == "" {
		opt.IfMatch = res.PreviousSHA256
	}
	op := policy.PathUpdate
	if res.PreviousSHA256 == "" {
		op = policy.PathCreate
	}
	return sandbox.Preview{Diff: d, Text: d.Text, Paths: []policy.EscalationPath{sandbox.PathOf(op, t)}}, nil
}

// previewEdit is previewWrite for an edit: the edit's diff, planned on
// the file as it is, and the edit pinned to that content.
func previewEdit(f *sandbox.Fence, t sandbox.Target, opt *EditOptions) (sandbox.Preview, error) {
	peek := *opt
	peek.Diff.Form = diff.FormFull
	res, err := dryEdit(f, t, peek)
	if err != nil {
		return sandbox.Preview{}, err
	}
	if opt.IfMatch == "" {
		opt.IfMatch = res.PreviousSHA256
	}
	return sandbox.Preview{Diff: res.Diff, Text: res.Diff.Text, Paths: []policy.EscalationPath{sandbox.PathOf(policy.PathUpdate, t)}}, nil
}

// PreviewWrite is what a write of t would do, computed without writing
// and whatever the fence says of t: the diff an approver is shown, and the
// hash of the content it replaces ("" when it creates the file). A front
// end that has the approval asked elsewhere (dsh-fs mcp's client) shows
// this and pins the change to it.
func PreviewWrite(f *sandbox.Fence, t sandbox.Target, opt WriteOptions) (*WriteResult, error) {
	h, err := f.Look("write", t, opt.Mkdir)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	opt.DryRun = true
	opt.Diff.Form = diff.FormFull
	return writeHeld(h, opt)
}

// PreviewEdit is PreviewWrite for an edit.
func PreviewEdit(f *sandbox.Fence, t sandbox.Target, opt EditOptions) (*EditResult, error) {
	opt.Diff.Form = diff.FormFull
	return dryEdit(f, t, opt)
}

// PreviewPatch is PreviewWrite for a patch: the whole patch's diff, every
// file in full, planned on the files as they are whatever the fence says
// of them; and the SHA-256 of each file it changes that exists, by the
// name the patch gives it (as PatchOptions.IfMatch takes it). A front end
// that has the approval asked elsewhere shows the diff and pins the patch
// to those hashes. The paths are every path it changes (sandbox.Preview's).
func PreviewPatch(f *sandbox.Fence, p *patch.Patch, opt PatchOptions) (diff.Result, map[string]string, []policy.EscalationPath, error) {
	changes, whole, err := previewChanges(f, p, opt)
	if err != nil {
		return diff.Result{}, nil, nil, err
	}
	pins := map[string]string{}
	for _, c := range changes {
		if c.src != nil {
			pins[c.file.Path] = c.oldSum
		}
	}
	return whole, pins, patchPaths(changes), nil
}

// patchPaths names every path the changes touch, with what each does
// there, in the patch's order: what an approver of the patch approves.
func patchPaths(changes []*fileChange) []policy.EscalationPath {
	var out []policy.EscalationPath
	for _, c := range changes {
		switch {
		case c.src == nil:
			out = append(out, sandbox.PathOf(policy.PathCreate, *c.dst))
		case c.dst == nil:
			out = append(out, sandbox.PathOf(policy.PathDelete, *c.src))
		case c.dst != c.src:
			out = append(out, sandbox.PathOf(policy.PathMoveFrom, *c.src), sandbox.PathOf(policy.PathMoveTo, *c.dst))
		default:
			out = append(out, sandbox.PathOf(policy.PathUpdate, *c.src))
		}
	}
	return out
}
