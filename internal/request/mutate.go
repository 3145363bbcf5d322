package request

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/search"
)

// Mutation are the options every write, edit and patch shares.
type Mutation struct {
	// IfMatch changes the file only while its content has this SHA-256
	// (hex); "" pins nothing. A patch pins per file (Patch.IfMatch).
	IfMatch string `json:"if_match,omitempty"`
	// IfMatchContent, when set, is the content the caller read, given
	// back: it must hash to IfMatch (fsops.CheckGiven), and a stale
	// IfMatch then shows the diff from it to the content now.
	IfMatchContent []byte `json:"if_match_content,omitempty"`
	// DryRun computes the result and its diff and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Diff is the form of the result's diff: auto, full or summary ("" is
	// auto).
	Diff string `json:"diff,omitempty"`
}

// Write asks to replace a file atomically with new content (fsops.Write).
type Write struct {
	Path string `json:"path"`
	// Content is the new content. Source, when set, is read instead; it
	// is not serialised, so a request that crosses a process carries
	// Content.
	Content   []byte    `json:"content"`
	Source    io.Reader `json:"-"`
	Mkdir     bool      `json:"mkdir,omitempty"`
	Overwrite bool      `json:"overwrite,omitempty"`
	// Encoding writes the UTF-8 content in this encoding ("" writes the
	// bytes as given).
	Encoding string `json:"encoding,omitempty"`
	Mutation
}

// Op is OpWrite.
func (Write) Op() string { return OpWrite }

// Run writes the file r names.
func (r Write) Run(x *Exec) (*fsops.WriteResult, error) {
	if err := fsops.CheckGiven(OpWrite, r.IfMatch, r.IfMatchContent); err != nil {
		return nil, err
	}
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	d, err := x.diffOptions(OpWrite, r.Diff)
	if err != nil {
		return nil, err
	}
	return fsops.Write(x.fence, t, r.options(d.Form, x))
}

func (r Write) run(x *Exec) (any, error) { return r.Run(x) }

func (r Write) options(form diff.Form, x *Exec) fsops.WriteOptions {
	content := r.Source
	if content == nil {
		content = bytes.NewReader(r.Content)
	}
	d := x.bounds.Diff
	d.Form = form
	return fsops.WriteOptions{Content: content, Mkdir: r.Mkdir, IfMatch: r.IfMatch, Overwrite: r.Overwrite,
		DryRun: r.DryRun, Diff: d, Encoding: r.Encoding, Recall: x.recall(r.IfMatchContent)}
}

// Preview is what r would do, computed without writing whatever the
// fence says of its path (fsops.PreviewWrite): the full diff an approver
// is shown, and the hash of the content it replaces. r's DryRun and Diff
// do not apply.
func (r Write) Preview(x *Exec) (*fsops.WriteResult, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.PreviewWrite(x.fence, t, r.options("", x))
}

// Edit asks to replace exact texts in a file, in order, all or nothing
// (fsops.Edit); or, with Paths, in several files, all or nothing
// (fsops.EditFiles).
type Edit struct {
	Path string `json:"path"`
	// Paths, when set, are the files to edit instead of Path: each a
	// path, or a glob (IsGlob) beneath the working folder, matched as
	// find matches it, whose files without the old text are skipped.
	Paths []string            `json:"paths,omitempty"`
	Edits []fsops.Replacement `json:"edits"`
	Mutation
}

// Op is OpEdit.
func (Edit) Op() string { return OpEdit }

// Run edits the file r names.
func (r Edit) Run(x *Exec) (*fsops.EditResult, error) {
	if err := fsops.CheckGiven(OpEdit, r.IfMatch, r.IfMatchContent); err != nil {
		return nil, err
	}
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	d, err := x.diffOptions(OpEdit, r.Diff)
	if err != nil {
		return nil, err
	}
	return fsops.Edit(x.fence, t, fsops.EditOptions{Edits: r.Edits, IfMatch: r.IfMatch, DryRun: r.DryRun, Diff: d,
		Recall: x.recall(r.IfMatchContent)})
}

func (r Edit) run(x *Exec) (any, error) {
	if len(r.Paths) > 0 {
		return r.RunFiles(x)
	}
	return r.Run(x)
}

// RunFiles edits the files r.Paths names, globs expanded.
func (r Edit) RunFiles(x *Exec) (*fsops.EditFilesResult, error) {
	if err := fsops.CheckGiven(OpEdit, r.IfMatch, r.IfMatchContent); err != nil {
		return nil, err
	}
	d, err := x.diffOptions(OpEdit, r.Diff)
	if err != nil {
		return nil, err
	}
	targets, err := r.targets(x)
	if err != nil {
		return nil, err
	}
	return fsops.EditFiles(x.fence, targets, fsops.EditOptions{Edits: r.Edits, IfMatch: r.IfMatch, DryRun: r.DryRun, Diff: d})
}

// IsGlob says an edit's path is a glob: it holds *, ?, [ or {.
func IsGlob(path string) bool { return strings.ContainsAny(path, "*?[{") }

// targets resolves r.Paths, each glob to the regular files find lists
// for it beneath the working folder (ignored files and .git left out,
// deny_read hidden), in path order.
func (r Edit) targets(x *Exec) ([]fsops.EditTarget, error) {
	var out []fsops.EditTarget
	for _, p := range r.Paths {
		if !IsGlob(p) {
			t, err := x.Resolve(p)
			if err != nil {
				return nil, err
			}
			out = append(out, fsops.EditTarget{Target: t})
			continue
		}
		if strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
			e := fserr.New(fserr.InvalidArgument, "edit: "+p+": a glob matches files beneath the working folder; it may not start with / or hold ..")
			e.Hint = "cd to the folder, or give the files' paths"
			return nil, e
		}
		base, err := x.Resolve(".")
		if err != nil {
			return nil, err
		}
		found, err := search.Find(x.fence, base, search.FindOptions{Glob: p, Type: fsops.TypeFile,
			Limit: fsops.MaxEditFiles + 1, MaxBytes: math.MaxInt})
		if err != nil {
			return nil, err
		}
		if found.Truncated {
			return nil, fserr.New(fserr.InvalidArgument, fmt.Sprintf("edit: %s: matches more than %d files; narrow the glob", p, fsops.MaxEditFiles))
		}
		for _, e := range found.Entries {
			t, err := x.Resolve(e.Path)
			if err != nil {
				return nil, err
			}
			out = append(out, fsops.EditTarget{Target: t, SkipNoMatch: true})
		}
	}
	return out, nil
}

// Preview is Write.Preview for an edit (fsops.PreviewEdit).
func (r Edit) Preview(x *Exec) (*fsops.EditResult, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.PreviewEdit(x.fence, t, fsops.EditOptions{Edits: r.Edits, IfMatch: r.IfMatch, Diff: x.bounds.Diff})
}

// Patch asks to apply a multi-file patch, a unified diff or apply_patch,
// all or nothing (fsops.Patch). It has no path of its own: its files
// are named in it, each resolved through the fence as it is placed.
type Patch struct {
	// Patch is the patch's text, as read.
	Patch []byte `json:"patch"`
	// IfMatch maps a file, as the patch names it, to the SHA-256 its
	// current content must have.
	IfMatch map[string]string `json:"if_match,omitempty"`
	DryRun  bool              `json:"dry_run,omitempty"`
	Diff    string            `json:"diff,omitempty"`
}

// Op is OpPatch.
func (Patch) Op() string { return OpPatch }

// Check parses the patch without applying it: a front end that hands
// the request on refuses one that could never apply here first.
func (r Patch) Check() error {
	_, err := fsops.ParsePatch(r.Patch)
	return err
}

// Run applies the patch. The diff form is checked before the patch is
// parsed.
func (r Patch) Run(x *Exec) (*fsops.PatchResult, error) {
	d, err := x.diffOptions(OpPatch, r.Diff)
	if err != nil {
		return nil, err
	}
	p, err := fsops.ParsePatch(r.Patch)
	if err != nil {
		return nil, err
	}
	return fsops.Patch(x.fence, p, fsops.PatchOptions{IfMatch: r.IfMatch, DryRun: r.DryRun, Diff: d, Recall: x.recall(nil)})
}

func (r Patch) run(x *Exec) (any, error) { return r.Run(x) }

// PatchPreview is what a patch would do (Patch.Preview).
type PatchPreview struct {
	// Diff is the whole patch's diff, every file in full.
	Diff diff.Result
	// Pins are the SHA-256 of each file the patch changes that exists,
	// by the name the patch gives it, as Patch.IfMatch takes them: a
	// front end that has the patch approved elsewhere pins it to what
	// the approver was shown.
	Pins map[string]string
	// Paths are every path the patch changes, with what it does there,
	// resolved: what its approver approves.
	Paths []policy.EscalationPath
}

// Preview is Write.Preview for a patch (fsops.PreviewPatch): planned on
// the files as they are, whatever the fence says of them, and changing
// none. r's IfMatch applies; its DryRun and Diff do not.
func (r Patch) Preview(x *Exec) (*PatchPreview, error) {
	p, err := fsops.ParsePatch(r.Patch)
	if err != nil {
		return nil, err
	}
	d, pins, paths, err := fsops.PreviewPatch(x.fence, p, fsops.PatchOptions{IfMatch: r.IfMatch, Diff: x.bounds.Diff})
	if err != nil {
		return nil, err
	}
	return &PatchPreview{Diff: d, Pins: pins, Paths: paths}, nil
}

// Mkdir asks to make a folder (fsops.Mkdir): one, or with Parents its
// missing parents too. A folder that is there already is no error.
type Mkdir struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
}

// Op is OpMkdir.
func (Mkdir) Op() string { return OpMkdir }

// Run makes the folder r names, resolved by name: a symlink there is
// never followed.
func (r Mkdir) Run(x *Exec) (*fsops.MkdirResult, error) {
	t, err := x.ResolveName(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.Mkdir(x.fence, t, fsops.MkdirOptions{Parents: r.Parents, DryRun: r.DryRun})
}

func (r Mkdir) run(x *Exec) (any, error) { return r.Run(x) }

// Move asks to rename a file, a symlink (as a link) or a folder to a path
// that does not exist (fsops.Move).
type Move struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	DryRun      bool   `json:"dry_run,omitempty"`
}

// Op is OpMove.
func (Move) Op() string { return OpMove }

// Run moves Source to Destination, each resolved by name
// (Exec.ResolveName), in that order. After a denial, Exec.ResolveName
// gives either target back (the one the denial names is the one to
// escalate).
func (r Move) Run(x *Exec) (*fsops.MoveResult, error) {
	src, err := x.ResolveName(r.Source)
	if err != nil {
		return nil, err
	}
	dst, err := x.ResolveName(r.Destination)
	if err != nil {
		return nil, err
	}
	return fsops.Move(x.fence, src, dst, r.DryRun)
}

func (r Move) run(x *Exec) (any, error) { return r.Run(x) }

// Remove asks to remove a file, a symlink (the link) or an empty folder
// (fsops.Remove): never recursive.
type Remove struct {
	Path   string `json:"path"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Op is OpRemove.
func (Remove) Op() string { return OpRemove }

// Run removes what r names, resolved by name.
func (r Remove) Run(x *Exec) (*fsops.RemoveResult, error) {
	t, err := x.ResolveName(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.Remove(x.fence, t, r.DryRun)
}

func (r Remove) run(x *Exec) (any, error) { return r.Run(x) }
