package fsops

import (
	"bytes"
	"io"

	"github.com/dshfs/dsh-fs/pkg/diff"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// escalateWrite puts a denied write to the escalation the call asked for,
// if any (sandbox.Fence.Escalate). An approver who is asked is shown the
// diff the write would apply: the content read for it is put back in
// front of the rest of the stream, and the change is pinned to the file
// it was shown against, so a file changed after the approval is FS_STALE
// rather than a change nobody saw. The approver is shown the full diff,
// whatever the caller's --diff.
func escalateWrite(f *sandbox.Fence, t *sandbox.Target, denied error, opt WriteOptions) (WriteOptions, error) {
	var preview sandbox.Preview
	if f.AsksApprover(denied) {
		content := opt.Content
		if content == nil {
			content = bytes.NewReader(nil)
		}
		limit := opt.Diff.BasisMaxBytes
		head, err := io.ReadAll(io.LimitReader(content, limit+1))
		if err != nil {
			return opt, fserr.FromOS("write: reading the content", t.Given, err)
		}
		tooLarge := int64(len(head)) > limit
		peek := opt
		// The approver sees every line, even of a file this creates,
		// whatever --diff the caller asked for its own result.
		peek.Diff.Form = diff.FormFull
		peek.Content = bytes.NewReader(head)
		if tooLarge {
			peek.Content = bytes.NewReader(nil)
		}
		res, err := dryWrite(f, *t, peek)
		if err != nil {
			return opt, err
		}
		d := res.Diff
		if tooLarge {
			d = diff.Omitted(diff.ReasonBasisTooLarge)
		}
		preview = sandbox.Preview{Diff: d, Text: d.Text}
		opt.Content = io.MultiReader(bytes.NewReader(head), content)
		if opt.IfMatch == "" {
			opt.IfMatch = res.PreviousSHA256
		}
	}
	return opt, f.Escalate(denied, t, preview)
}

// escalateEdit is escalateWrite for an edit: the approver is shown the
// edit's diff, planned on the file as it is, and the edit is pinned to
// that content.
func escalateEdit(f *sandbox.Fence, t *sandbox.Target, denied error, opt EditOptions) (EditOptions, error) {
	var preview sandbox.Preview
	if f.AsksApprover(denied) {
		peek := opt
		peek.Diff.Form = diff.FormFull
		res, err := dryEdit(f, *t, peek)
		if err != nil {
			return opt, err
		}
		preview = sandbox.Preview{Diff: res.Diff, Text: res.Diff.Text}
		if opt.IfMatch == "" {
			opt.IfMatch = res.PreviousSHA256
		}
	}
	return opt, f.Escalate(denied, t, preview)
}

// PreviewWrite is what a write of t would do, computed without writing
// and whatever the fence says of t: the diff an approver is shown, and the
// hash of the content it replaces ("" when it creates the file). A front
// end that has the approval asked elsewhere (dsh-fs mcp's client) shows
// this and pins the change to it.
func PreviewWrite(f *sandbox.Fence, t sandbox.Target, opt WriteOptions) (*WriteResult, error) {
	opt.Diff.Form = diff.FormFull
	return dryWrite(f, t, opt)
}

// PreviewEdit is PreviewWrite for an edit.
func PreviewEdit(f *sandbox.Fence, t sandbox.Target, opt EditOptions) (*EditResult, error) {
	opt.Diff.Form = diff.FormFull
	return dryEdit(f, t, opt)
}
