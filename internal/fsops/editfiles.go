package fsops

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// MaxEditFiles bounds the files one edit changes: a glob that matches
// more is refused before anything is read.
const MaxEditFiles = 1000

// EditTarget is one file of an edit across files. SkipNoMatch leaves the
// file out of the edit, and names it in the result's skipped, when no
// old text occurs in it: set for a file a glob found, where a file
// without the text is what a user expects; a file named on its own
// without it is FS_EDIT_NO_MATCH.
type EditTarget struct {
	Target      sandbox.Target
	SkipNoMatch bool
}

// EditFilesResult is the result of an edit across files: each file
// changed, in the order of its path, and the files left out.
type EditFilesResult struct {
	// Replacements counts the occurrences replaced in every file.
	Replacements int          `json:"replacements"`
	Files        []EditedFile `json:"files"`
	// Skipped are the files a glob found that hold no old text.
	Skipped  []string `json:"skipped,omitempty"`
	DryRun   bool     `json:"dry_run,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// EditedFile is one file of an edit across files: its new and previous
// hashes, the occurrences replaced, and its diff, bounded as an edit's.
type EditedFile struct {
	Path           string      `json:"path"`
	Replacements   int         `json:"replacements"`
	SHA256         string      `json:"sha256"`
	PreviousSHA256 string      `json:"previous_sha256"`
	Diff           diff.Result `json:"diff"`
}

// fileEdit is one file of an edit across files on its way.
type fileEdit struct {
	EditTarget
	lock    *locked
	content *loaded
	res     *EditResult
	sp      splice
	staged  *staged
	skipped bool
}

// EditFiles applies the same edits to every file of targets, all or
// nothing, as patch applies a patch (docs/design.md §5, edit): every
// file goes through the fence as a single edit does, and an escalation
// shows the approver every file's diff, once; every file is planned on
// what it holds, then locked (in the order of its path), planned again,
// and its new content staged (written and synced beside it, unnamed)
// before the first rename. A file without a match, a denial, a stale
// file or a full disk changes nothing and leaves no temp file. --if-match
// pins one file, so it is refused here: patch pins each.
func EditFiles(f *sandbox.Fence, targets []EditTarget, opt EditOptions) (*EditFilesResult, error) {
	if err := checkEdits(opt.Edits); err != nil {
		return nil, err
	}
	if opt.IfMatch != "" {
		e := fserr.New(fserr.InvalidArgument, "edit: --if-match pins one file; this edit changes several")
		e.Hint = "edit the files one at a time with --if-match, or use patch with --if-match PATH=SHA256 for each"
		return nil, e
	}
	files, err := editTargets(targets)
	if err != nil {
		return nil, err
	}
	var pinned map[string]string
	in := sandbox.Intent{Preview: func() (sandbox.Preview, error) {
		pv, sums, err := previewEditFiles(f, files, opt)
		pinned = sums
		return pv, err
	}}
	for _, fe := range files {
		if err := f.WouldWrite("edit", &fe.Target, in); err != nil {
			return nil, err
		}
	}
	// Planned on the files as they are first: a file without a match
	// fails before any is locked.
	dry, err := planEditFiles(f, files, opt)
	if err != nil || opt.DryRun {
		if dry != nil {
			dry.DryRun = true
		}
		return dry, err
	}
	defer func() {
		for _, fe := range files {
			if fe.staged != nil {
				fe.staged.discard()
			}
			if fe.content != nil {
				fe.content.release()
			}
			if fe.lock != nil {
				fe.lock.Close()
			}
		}
	}()
	for _, fe := range files {
		if !fe.skipped {
			if err := lockEdit(f, fe, opt, in, pinned); err != nil {
				return nil, err
			}
		}
	}
	return commitEditFiles(files)
}

// editTargets refuses an edit of no file or of too many, drops a file
// named twice (a glob and a name may both find it; it is skipped only
// if every mention lets it be), and sorts the files by path, the order
// they are locked in, so two edits never wait on each other.
func editTargets(targets []EditTarget) ([]*fileEdit, error) {
	if len(targets) == 0 {
		e := fserr.New(fserr.NotFound, "edit: no file to edit: the globs match no file")
		e.Hint = "find GLOB lists what a glob matches; nothing was changed"
		return nil, e
	}
	byPath := map[string]*fileEdit{}
	var files []*fileEdit
	for _, t := range targets {
		if fe, ok := byPath[t.Target.Path]; ok {
			fe.SkipNoMatch = fe.SkipNoMatch && t.SkipNoMatch
			continue
		}
		fe := &fileEdit{EditTarget: t}
		byPath[t.Target.Path] = fe
		files = append(files, fe)
	}
	if len(files) > MaxEditFiles {
		return nil, fserr.New(fserr.InvalidArgument, fmt.Sprintf("edit: %d files to edit, more than %d; narrow the glob", len(files), MaxEditFiles))
	}
	slices.SortStableFunc(files, func(a, b *fileEdit) int { return strings.Compare(a.Target.Path, b.Target.Path) })
	return files, nil
}

// planEditFiles plans every file on what it holds, unlocked, and returns
// the result a dry run gives. A file that may skip and has no match is
// marked skipped; when every file is, the edit is FS_EDIT_NO_MATCH.
func planEditFiles(f *sandbox.Fence, files []*fileEdit, opt EditOptions) (*EditFilesResult, error) {
	res := &EditFilesResult{Files: []EditedFile{}}
	for _, fe := range files {
		r, err := dryEdit(f, fe.Target, opt)
		if fe.SkipNoMatch && fserr.CodeOf(err) == fserr.EditNoMatch && !isPick(err) {
			fe.skipped = true
			res.Skipped = append(res.Skipped, fe.Target.Given)
			continue
		}
		if err != nil {
			return nil, withPatchHint(err, len(files))
		}
		fe.res = r
		res.add(fe)
	}
	if len(res.Files) == 0 {
		e := fserr.New(fserr.EditNoMatch, fmt.Sprintf("edit: old text occurs in none of the %d files", len(files)))
		e.Hint = "grep finds where a text occurs; nothing was changed"
		return nil, e
	}
	return res, nil
}

// withPatchHint adds to a no-match or an ambiguity in one of several
// files that patch makes a different change in each.
func withPatchHint(err error, files int) error {
	e, ok := err.(*fserr.Error)
	if !ok || files < 2 || (e.Code() != fserr.EditNoMatch && e.Code() != fserr.EditAmbiguous) || strings.Contains(e.Hint, "patch") {
		return err
	}
	e.Hint = strings.TrimSuffix(e.Hint, "; nothing was changed") + "; for a different change in each file, patch applies one diff; no file was changed"
	return e
}

// isPick says err is a pick (--occurrence, --line) that names no match:
// the file has the old text, so it is never skipped.
func isPick(err error) bool {
	e, ok := err.(*fserr.Error)
	if !ok {
		return false
	}
	_, pick := e.Detail.(AmbiguousDetail)
	return pick
}

func (res *EditFilesResult) add(fe *fileEdit) {
	r := fe.res
	res.Replacements += r.Replacements
	res.Files = append(res.Files, EditedFile{Path: fe.Target.Given, Replacements: r.Replacements,
		SHA256: r.SHA256, PreviousSHA256: r.PreviousSHA256, Diff: r.Diff})
	if res.Warnings == nil {
		res.Warnings = r.Warnings // the same edits give the same warnings
	}
}

// lockEdit locks fe's file, reads what was locked, plans the edit on it
// again, and stages the new content. A file that changed since the
// approver of an escalated edit was shown it is FS_STALE.
func lockEdit(f *sandbox.Fence, fe *fileEdit, opt EditOptions, in sandbox.Intent, pinned map[string]string) error {
	t := fe.Target
	l, err := lockTarget(f, "edit", &t, in)
	if err != nil {
		return err
	}
	fe.lock = l
	if !l.Exists() {
		return notFound("edit", t.Given)
	}
	if fe.content, err = loadFile(l.File, l.Stat.Size, t.Given); err != nil {
		return err
	}
	if fe.res, fe.sp, err = planEdit(t.Given, fe.content.data, opt); err != nil {
		return err
	}
	if want, ok := pinned[t.Path]; ok && want != fe.res.PreviousSHA256 {
		e := fserr.New(fserr.Stale, "edit: "+t.Given+": changed since the approver was shown the edit")
		e.Hint = "read the file again and redo the edit; nothing was changed"
		return e
	}
	fe.staged, err = l.stage(&l.Stat, 0, func(tmp *os.File) (func() error, error) {
		_, err := fe.sp.writeTo(tmp)
		return nil, fserr.FromOS("edit", t.Given, err)
	})
	return err
}

// commitEditFiles renames every staged file into place, in the order of
// their paths. A failure stops it; its message says which files were
// changed and which not.
func commitEditFiles(files []*fileEdit) (*EditFilesResult, error) {
	res := &EditFilesResult{Files: []EditedFile{}}
	var pending []string
	for _, fe := range files {
		if fe.skipped {
			res.Skipped = append(res.Skipped, fe.Target.Given)
		} else {
			pending = append(pending, fe.Target.Given)
		}
	}
	var changed []string
	for _, fe := range files {
		if fe.skipped {
			continue
		}
		if err := fe.staged.commit(); err != nil {
			if changed == nil {
				return nil, err
			}
			e := fserr.Wrap(fserr.CodeOf(err), fmt.Sprintf("edit: stopped after %d of %d files: %v; changed: %s; not changed: %s",
				len(changed), len(pending), err, strings.Join(changed, ", "), strings.Join(pending[len(changed):], ", ")), err)
			e.Hint = "the files named changed were changed, the others not; read them and edit what is left"
			return nil, e
		}
		changed = append(changed, fe.Target.Given)
		res.add(fe)
	}
	return res, nil
}

// previewEditFiles is what the approver of an escalated edit across
// files is shown: every file's diff in full, joined, planned on the
// files as they are; and each file's hash, to which the edit is then
// pinned.
func previewEditFiles(f *sandbox.Fence, files []*fileEdit, opt EditOptions) (sandbox.Preview, map[string]string, error) {
	peek := opt
	peek.Diff.Form = diff.FormFull
	var whole diff.Result
	var text strings.Builder
	sums := map[string]string{}
	var paths []policy.EscalationPath
	for _, fe := range files {
		r, err := dryEdit(f, fe.Target, peek)
		if fe.SkipNoMatch && fserr.CodeOf(err) == fserr.EditNoMatch && !isPick(err) {
			continue
		}
		if err != nil {
			return sandbox.Preview{}, nil, err
		}
		sums[fe.Target.Path] = r.PreviousSHA256
		// Every file the edit changes is named to the approver; the
		// fence refuses any other (FS_STALE).
		paths = append(paths, sandbox.PathOf(policy.PathUpdate, fe.Target))
		d := r.Diff
		whole.Added += d.Added
		whole.Removed += d.Removed
		whole.Truncated = whole.Truncated || d.Truncated
		if d.Omitted != "" {
			fmt.Fprintf(&text, "%s: diff omitted (%s)\n", fe.Target.Given, d.Omitted)
		}
		text.WriteString(d.Text)
	}
	whole.Text = text.String()
	return sandbox.Preview{Diff: whole, Text: whole.Text, Paths: paths}, sums, nil
}
