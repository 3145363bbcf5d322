package fsops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	slash "path"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/closest"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/patch"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// PatchOptions shape a patch.
type PatchOptions struct {
	// IfMatch maps a file, as the patch names it, to the SHA-256 (hex)
	// its current content must have; a file it does not name is not
	// pinned.
	IfMatch map[string]string
	// Recall, when set, gives back the content the caller read, for the
	// diff of a stale IfMatch (StaleDetail.Diff).
	Recall Recall
	DryRun bool
	// Diff bounds each file's diff.
	Diff diff.Options
}

// PatchResult is the result of a patch: each file it changed, in the
// patch's order.
type PatchResult struct {
	Format string        `json:"format"`
	Files  []PatchedFile `json:"files"`
	DryRun bool          `json:"dry_run,omitempty"`
}

// The actions of a PatchedFile.
const (
	ActionCreated = "created"
	ActionUpdated = "updated"
	ActionDeleted = "deleted"
	ActionMoved   = "moved"
)

// PatchedFile is one file of a patch's result. Path is where the file is
// now (for a deleted file, where it was); From is where a moved file was.
// SHA256 is its new content's hash (absent for a deleted file),
// PreviousSHA256 its old content's (absent for a created file).
type PatchedFile struct {
	Path           string      `json:"path"`
	Action         string      `json:"action"`
	From           string      `json:"from,omitempty"`
	SHA256         string      `json:"sha256,omitempty"`
	PreviousSHA256 string      `json:"previous_sha256,omitempty"`
	Hunks          int         `json:"hunks"`
	Diff           diff.Result `json:"diff"`
}

// PatchNoMatchDetail is the detail of FS_EDIT_NO_MATCH for a hunk of a
// patch that cannot be placed: the file, the hunk (its number in the
// file and its header's line in the patch) and the closest region.
// AlreadyApplied says the hunk's new side is in the file already.
type PatchNoMatchDetail struct {
	File           string          `json:"file"`
	Hunk           int             `json:"hunk"`
	PatchLine      int             `json:"patch_line"`
	AlreadyApplied bool            `json:"already_applied,omitempty"`
	Closest        *closest.Region `json:"closest,omitempty"`
}

// ParsePatch parses a patch in either format; a malformed one is
// FS_INVALID_ARGUMENT with its line.
func ParsePatch(data []byte) (*patch.Patch, error) {
	p, err := patch.Parse(data)
	if err != nil {
		e := fserr.Wrap(fserr.InvalidArgument, "patch: "+err.Error(), err)
		e.Hint = "give a unified diff as git diff writes it, or *** Begin Patch … *** End Patch; nothing was changed"
		return nil, e
	}
	return p, nil
}

// fileChange is one file of a patch on its way: its targets, what was
// locked and read, and what will be written.
type fileChange struct {
	file *patch.File
	// src is the file read (Update, Delete, and a move's source); dst
	// the file written (Add, Update, a move's destination). An update in
	// place has both the same.
	src, dst *sandbox.Target
	// follow is where src leads when its last name is a symlink, for a
	// removal or a move: the fence decides on it too, and the plan
	// refuses the link (a patch removes and moves regular files).
	follow  *sandbox.Target
	srcLock *locked
	dstLock *locked
	// missing are the folders above dst that do not exist, deepest
	// first: made on the way, removed again if the patch fails.
	missing []string

	oldSum  string
	old     []byte
	new     []byte
	staged  *staged
	result  PatchedFile
	renamed bool // a move without a change of content: a rename
}

// Patch applies p all or nothing across its files (docs/design.md §5,
// patch). Every file goes through the fence as write and edit do; an
// escalation shows the approver the whole patch's diff, once. Every
// target is locked, every hunk placed and every new content staged
// (written and synced beside its target, unnamed) before the first
// rename: a hunk that does not apply, a denial, a stale file or a full
// disk changes nothing and leaves no temp file. Then the renames run in a
// burst: creations first, replacements, renames, removals last.
func Patch(f *sandbox.Fence, p *patch.Patch, opt PatchOptions) (*PatchResult, error) {
	changes, err := patchTargets(f, p, opt)
	if err != nil {
		return nil, err
	}
	var pinned map[string]string
	preview := func() (sandbox.Preview, error) {
		pv, sums, err := previewPatch(f, p, opt)
		pinned = sums
		return pv, err
	}
	// Decided and planned on the files as they are first: a denial or a
	// hunk that does not apply fails before any folder is made or any
	// file locked. The plan is made again on what is locked.
	dry, err := dryPatch(f, p, changes, opt, preview)
	if err != nil || opt.DryRun {
		return dry, err
	}
	defer func() {
		for _, c := range changes {
			if c.staged != nil {
				c.staged.discard()
			}
			if c.srcLock != nil {
				c.srcLock.Close()
			}
			if c.dstLock != nil && c.dstLock != c.srcLock {
				c.dstLock.Close()
			}
		}
	}()
	done := false
	defer func() {
		if !done {
			// A named temp file (macOS) would keep its new folder from
			// being removed: staged content goes first (discard twice is
			// safe).
			for _, c := range changes {
				if c.staged != nil {
					c.staged.discard()
				}
			}
			removeMade(f, changes)
		}
	}()
	if err := lockAll(f, changes, preview); err != nil {
		return nil, err
	}
	for _, c := range changes {
		if err := planLocked(f, p, c, opt, pinned); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		if err := stageChange(c); err != nil {
			return nil, err
		}
	}
	done = true
	if err := burst(f, p.Format, changes); err != nil {
		return nil, err
	}
	res := &PatchResult{Format: string(p.Format)}
	for _, c := range changes {
		res.Files = append(res.Files, c.result)
	}
	return res, nil
}

// patchTargets resolves every file of p and refuses a patch that names a
// file twice, or an --if-match for a file it does not name.
func patchTargets(f *sandbox.Fence, p *patch.Patch, opt PatchOptions) ([]*fileChange, error) {
	named := map[string]bool{}
	seen := map[string]string{}
	var changes []*fileChange
	claim := func(t sandbox.Target) error {
		if prev, ok := seen[t.Path]; ok {
			return fserr.New(fserr.InvalidArgument, "patch: "+t.Given+": the patch changes this file twice (as "+prev+" too); give each file one section")
		}
		seen[t.Path] = t.Given
		return nil
	}
	followed := func(t *sandbox.Target) (*sandbox.Target, error) {
		ft, err := f.Resolve(t.Given)
		if err != nil || ft.Path == t.Path {
			return nil, err
		}
		return &ft, nil
	}
	resolve := func(path string, name bool) (*sandbox.Target, error) {
		if path == "" || strings.ContainsRune(path, 0) {
			return nil, fserr.New(fserr.InvalidArgument, "patch: a file name is empty or holds NUL")
		}
		named[path] = true
		r := f.Resolve
		if name {
			r = f.ResolveName
		}
		t, err := r(path)
		if err != nil {
			return nil, err
		}
		if len(t.Path) >= fsys.PathMax {
			// The kernel resolves no longer path; refused before a
			// folder of it is made.
			return nil, fserr.New(fserr.InvalidArgument, fmt.Sprintf("patch: %.80s…: the path is longer than the system allows (%d bytes)", path, fsys.PathMax))
		}
		if err := claim(t); err != nil {
			return nil, err
		}
		return &t, nil
	}
	for _, file := range p.Files {
		c := &fileChange{file: file}
		var err error
		switch {
		case file.Kind == patch.Add:
			c.dst, err = resolve(file.Path, false)
		case file.Kind == patch.Delete:
			if c.src, err = resolve(file.Path, true); err == nil {
				c.follow, err = followed(c.src)
			}
		case file.MoveTo != "":
			if c.src, err = resolve(file.Path, true); err == nil {
				c.follow, err = followed(c.src)
			}
			if err == nil {
				c.dst, err = resolve(file.MoveTo, false)
			}
			c.renamed = len(file.Hunks) == 0 && file.Mode == 0
		default:
			c.src, err = resolve(file.Path, false)
			c.dst = c.src
		}
		if err != nil {
			return nil, err
		}
		changes = append(changes, c)
	}
	for path, sum := range opt.IfMatch {
		if !named[path] {
			return nil, fserr.New(fserr.InvalidArgument, "patch: --if-match "+path+": the patch changes no file of that name")
		}
		if !isSHA256(sum) {
			return nil, fserr.New(fserr.InvalidArgument, "patch: --if-match "+path+": want PATH=SHA256, a SHA-256 in hex (64 characters)")
		}
	}
	return changes, nil
}

// lockAll decides on and locks every target, in the order of their paths
// so two patches never wait on each other. A target that must exist (an
// update's, a removal's) or must not (a creation's) is checked under its
// lock.
func lockAll(f *sandbox.Fence, changes []*fileChange, preview func() (sandbox.Preview, error)) error {
	type slot struct {
		c   *fileChange
		t   *sandbox.Target
		dst bool
	}
	var slots []slot
	// The opens of a part of a git directory at the top of a root, which
	// hold the root's lock until closed: two in one root would wait on
	// each other (sandbox.LocksRoot).
	type rootOpen struct {
		t     *sandbox.Target
		opens int
	}
	var rootOpens []rootOpen
	for _, c := range changes {
		if c.src != nil {
			slots = append(slots, slot{c, c.src, false})
			if sandbox.LocksRoot(*c.src) {
				// A removal and a rename open the folder again.
				rootOpens = append(rootOpens, rootOpen{c.src, 1 + btoi(c.dst != c.src)})
			}
		}
		if c.dst != nil && c.dst != c.src {
			slots = append(slots, slot{c, c.dst, true})
			if sandbox.LocksRoot(*c.dst) {
				rootOpens = append(rootOpens, rootOpen{c.dst, 1 + btoi(c.renamed)})
			}
		}
	}
	for _, a := range rootOpens {
		n := 0
		for _, b := range rootOpens {
			if a.t.SameRoot(*b.t) {
				n += b.opens
			}
		}
		if n > 1 {
			return fserr.New(fserr.InvalidArgument, "patch: "+a.t.Given+": the patch changes more than one part of a git directory at the top of a writable root, or moves or deletes one; patch them one at a time")
		}
	}
	slices.SortStableFunc(slots, func(a, b slot) int { return strings.Compare(a.t.Path, b.t.Path) })
	for _, s := range slots {
		mkdir := s.dst && s.c.file.Kind != patch.Delete
		if mkdir {
			s.c.missing = missingFolders(s.t.Path)
		}
		l, err := lockTarget(f, "patch", s.t, sandbox.Intent{Mkdir: mkdir, Preview: preview})
		if err != nil {
			return err
		}
		switch {
		case s.dst:
			s.c.dstLock = l
		case s.c.src == s.c.dst:
			s.c.srcLock, s.c.dstLock = l, l
		default:
			s.c.srcLock = l
		}
		switch {
		case s.dst && l.Exists():
			e := fserr.New(fserr.Exists, "patch: "+s.t.Given+": the file exists; the patch creates it")
			e.Hint = "make the patch update it instead, or remove it first; nothing was changed"
			return e
		case !s.dst && !l.Exists():
			return notFound("patch", s.t.Given)
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// missingFolders lists the folders above path that do not exist,
// deepest first. It is by name and only says what to clean up: the
// folders are made through the fence's handles.
func missingFolders(path string) []string {
	var out []string
	for dir := slash.Dir(path); dir != "/" && dir != "."; dir = slash.Dir(dir) {
		if _, err := os.Lstat(fsys.ToOS(dir)); err == nil {
			break
		}
		out = append(out, dir)
	}
	return out
}

// removeMade removes, after a failure, the folders the patch made on its
// way, deepest first, each only if it is still empty (Fence.Remove never
// removes a folder that holds anything).
func removeMade(f *sandbox.Fence, changes []*fileChange) {
	for _, c := range changes {
		for _, dir := range c.missing {
			if _, err := os.Lstat(fsys.ToOS(dir)); err != nil {
				continue // never made
			}
			if t, err := f.ResolveName(dir); err == nil {
				f.Remove("patch", t, sandbox.Intent{})
			}
		}
	}
}

// planLocked reads what was locked and computes the new content.
func planLocked(f *sandbox.Fence, p *patch.Patch, c *fileChange, opt PatchOptions, pinned map[string]string) error {
	if c.srcLock != nil {
		old, err := readAll(c.srcLock.File, c.src.Given, c.srcLock.Stat.Size)
		if err != nil {
			return err
		}
		same := bytes.Equal(old, c.old)
		c.old = old
		if same {
			// The file locked is the file planned: its plan stands.
			return checkPinned(c, pinned)
		}
	}
	if err := planChange(p, c, opt); err != nil {
		return err
	}
	return checkPinned(c, pinned)
}

// checkPinned refuses a file that changed since the approver of an
// escalated patch was shown it.
func checkPinned(c *fileChange, pinned map[string]string) error {
	if c.src != nil {
		if want, ok := pinned[c.src.Path]; ok && want != c.oldSum {
			return staleSincePreview(c.src.Given)
		}
	}
	return nil
}

// planChange computes c's new content and result from c.old, checking
// --if-match. Nothing is written.
func planChange(p *patch.Patch, c *fileChange, opt PatchOptions) error {
	file := c.file
	given := file.Path
	if c.src != nil {
		sum := sha256.Sum256(c.old)
		c.oldSum = hex.EncodeToString(sum[:])
		if err := checkIfMatch("patch", given, opt.IfMatch[given], c.oldSum, staleBasis{now: c.old, held: true, recall: opt.Recall, diff: opt.Diff}); err != nil {
			return err
		}
	}
	res := PatchedFile{Path: given, Hunks: len(file.Hunks)}
	switch {
	case file.Kind == patch.Add:
		res.Action = ActionCreated
	case file.Kind == patch.Delete:
		res.Action = ActionDeleted
	case file.MoveTo != "":
		res.Action, res.Path, res.From = ActionMoved, file.MoveTo, given
	default:
		res.Action = ActionUpdated
	}
	if c.src != nil {
		res.PreviousSHA256 = c.oldSum
	}
	var err error
	switch {
	case file.Kind == patch.Add:
		var out string
		if out, err = patch.Apply(p.Format, file, ""); err == nil {
			c.new = []byte(out)
		}
	case file.Kind == patch.Delete:
		// A unified deletion lists the lines it removes: they must be
		// the file's, as git apply checks.
		if len(file.Hunks) > 0 {
			_, err = applyText(p.Format, file, c.old)
		}
	case len(file.Hunks) == 0:
		c.new = c.old
	default:
		c.new, err = applyText(p.Format, file, c.old)
	}
	if err != nil {
		return patchError(given, c.old, err)
	}
	if file.Kind != patch.Delete {
		sum := sha256.Sum256(c.new)
		res.SHA256 = hex.EncodeToString(sum[:])
	}
	res.Diff = patchDiff(res.Path, c, file.Kind, opt.Diff)
	c.result = res
	return nil
}

// applyText applies file's hunks to content, a file in its own encoding:
// the text is decoded to UTF-8, BOM aside, patched, and encoded back, so a
// BOM, the encoding and every byte the hunks do not touch are kept, as
// edit keeps them (text.Encoding).
func applyText(format patch.Format, file *patch.File, content []byte) ([]byte, error) {
	enc, binary := text.Detect(content)
	if binary {
		e := fserr.New(fserr.Binary, "patch: "+file.Path+": binary content")
		e.Hint = "write replaces a binary file whole; nothing was changed"
		return nil, e
	}
	out, err := patch.Apply(format, file, string(enc.Decode(content)))
	if err != nil {
		return nil, err
	}
	body, err := enc.Encode(out)
	if err != nil {
		var ue *text.UnencodableError
		if errors.As(err, &ue) {
			e := fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("patch: %s: new text has %q (%U), which %s cannot store", file.Path, ue.Rune, ue.Rune, ue.Encoding), err)
			e.Hint = "the file keeps its encoding; use characters it can store; nothing was changed"
			return nil, e
		}
		return nil, err
	}
	return append(bytes.Clone(content[:enc.BOMLen()]), body...), nil
}

// patchError turns a hunk that cannot be placed into FS_EDIT_NO_MATCH with
// the closest region, as edit reports an old text it cannot find.
func patchError(given string, content []byte, err error) error {
	var he *patch.HunkError
	if !errors.As(err, &he) {
		return err
	}
	enc, _ := text.Detect(content)
	var c *closest.Region
	if he.FoundAt == 0 {
		c = closest.Find(enc.Decode(content), he.Old)
	}
	e := fserr.Wrap(fserr.EditNoMatch, "patch: "+he.Error(), err)
	e.Detail = PatchNoMatchDetail{File: given, Hunk: he.Hunk, PatchLine: he.Line, AlreadyApplied: he.AlreadyApplied, Closest: c}
	switch {
	case he.FoundAt > 0:
		e.Hint = "the hunk's lines are in the file but its format's rules place it elsewhere (see the message): fix its header or context; nothing was changed"
	case he.AlreadyApplied:
		e.Hint = "the file already holds this hunk's new lines: the patch, or part of it, may have been applied before; nothing was changed"
	case c != nil:
		e.Msg += fmt.Sprintf("; lines %d-%d are close: %s", c.StartLine, c.EndLine, strings.Join(c.Differences, "; "))
		e.Hint = "make the hunk's context and removed lines match detail.closest.text exactly; nothing was changed"
	default:
		e.Hint = "read the file and write the hunk against its current lines; nothing was changed"
	}
	return e
}

func staleSincePreview(given string) error {
	e := fserr.New(fserr.Stale, "patch: "+given+": changed since the approver was shown the patch")
	e.Hint = "read the file again and redo the patch; nothing was changed"
	return e
}

// patchDiff is a file's diff in the result, bounded by opt.
func patchDiff(name string, c *fileChange, kind patch.Kind, opt diff.Options) diff.Result {
	if int64(len(c.old)) > opt.BasisMaxBytes || int64(len(c.new)) > opt.BasisMaxBytes {
		return diff.Omitted(diff.ReasonBasisTooLarge)
	}
	switch kind {
	case patch.Add:
		return diff.UnifiedCreated(name, diffText(c.new), opt)
	case patch.Delete:
		return diff.Unified(name, diffText(c.old), nil, opt)
	}
	return diff.Unified(name, diffText(c.old), diffText(c.new), opt)
}

// stageChange writes c's new content beside its target, synced and
// unnamed. A removal and a rename stage nothing.
func stageChange(c *fileChange) error {
	if c.file.Kind == patch.Delete || c.renamed {
		return nil
	}
	l := c.dstLock
	// The new content takes the bits and owner of the file it comes
	// from: the one it replaces, or a moved file's source.
	var like *fsys.Stat_t
	if c.srcLock != nil {
		like = &c.srcLock.Stat
	}
	mode := c.file.Mode
	var chmod uint32
	if mode != 0 && like != nil {
		chmod = execBits(uint32(like.Mode&0o7777), mode)
	}
	s, err := l.stage(like, chmod, func(tmp *os.File) (func() error, error) {
		if _, err := tmp.Write(c.new); err != nil {
			return nil, fserr.FromOS("patch", c.dst.Given, err)
		}
		if mode != 0 && like == nil {
			// A new file's bits are the umask's; a diff's "new file
			// mode 100755" adds the execute bits where it can read.
			var st fsys.Stat_t
			if err := fsys.Fstat(int(tmp.Fd()), &st); err != nil {
				return nil, fserr.FromOS("patch", c.dst.Given, os.NewSyscallError("fstat", err))
			}
			if err := fsys.Fchmod(int(tmp.Fd()), execBits(uint32(st.Mode&0o7777), mode)); err != nil {
				return nil, fserr.FromOS("patch", c.dst.Given, os.NewSyscallError("fchmod", err))
			}
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	c.staged = s
	return nil
}

// execBits is perm with the execute bits a diff's mode says: set where
// perm lets read (as git apply does for 100755), or cleared.
func execBits(perm, mode uint32) uint32 {
	if mode&0o100 != 0 {
		return perm | (perm&0o444)>>2
	}
	return perm &^ 0o111
}

// burst commits every staged change: creations first (the one step a
// concurrent creator can refuse), then replacements, renames, and
// removals. A failure stops it, its message naming what was changed.
// After a kill between two steps, the same patch run again must refuse
// rather than apply a hunk twice: a creation, rename or removal makes it
// refuse, and a replacement that adds lines after its context never goes
// first while the patch has such a step (firstStep).
func burst(f *sandbox.Fence, format patch.Format, changes []*fileChange) error {
	type step struct {
		c   *fileChange
		run func() error
		// refusesAgain says that once the step is done, the same
		// patch refuses; false for a step that must not go first (a
		// moved file's old name is removed after its new one is made).
		refusesAgain func() bool
	}
	always := func() bool { return true }
	var creates, replaces, renames, removes []step
	for _, c := range changes {
		switch {
		case c.file.Kind == patch.Delete:
			removes = append(removes, step{c, func() error { _, err := f.Remove("patch", *c.src, sandbox.Intent{}); return err }, always})
		case c.renamed:
			renames = append(renames, step{c, func() error { _, err := f.Move("patch", *c.src, *c.dst, sandbox.Intent{}); return err }, always})
		case c.src == c.dst:
			replaces = append(replaces, step{c, c.staged.commit, func() bool {
				_, err := applyText(format, c.file, c.new)
				return err != nil
			}})
		default:
			creates = append(creates, step{c, c.staged.commit, always})
			if c.src != nil {
				removes = append(removes, step{c, func() error { _, err := f.Remove("patch", *c.src, sandbox.Intent{}); return err }, func() bool { return false }})
			}
		}
	}
	steps := slices.Concat(creates, replaces, renames, removes)
	// Where the first step is a replacement the patch would take again
	// (so there is no creation), the first step that makes it refuse
	// goes before it. The replacement's planning is repeated on its new
	// content only then, and only up to that step.
	if i := slices.IndexFunc(steps, func(s step) bool { return s.refusesAgain() }); i > 0 {
		first := steps[i]
		steps = slices.Insert(slices.Delete(steps, i, i+1), 0, first)
	}
	doneFiles := map[*fileChange]int{}
	for i, s := range steps {
		if err := s.run(); err != nil {
			var applied, pending []string
			for _, c := range changes {
				if doneFiles[c] > 0 {
					applied = append(applied, c.result.Path)
				}
			}
			for _, later := range steps[i:] {
				if !slices.Contains(pending, later.c.result.Path) {
					pending = append(pending, later.c.result.Path)
				}
			}
			if applied == nil {
				applied = []string{"none"}
			}
			e := fserr.Wrap(fserr.CodeOf(err), fmt.Sprintf("patch: stopped after %d of %d steps: %v; changed: %s; not changed: %s",
				i, len(steps), err, strings.Join(applied, ", "), strings.Join(pending, ", ")), err)
			e.Hint = "the files named changed were changed, the others not; read them and patch what is left"
			return e
		}
		doneFiles[s.c]++
	}
	return nil
}

// dryPatch plans p on the files as they are, without locks and without
// writing: the fence decides on every target as a real patch would.
func dryPatch(f *sandbox.Fence, p *patch.Patch, changes []*fileChange, opt PatchOptions, preview func() (sandbox.Preview, error)) (*PatchResult, error) {
	res := &PatchResult{Format: string(p.Format), DryRun: true}
	for _, c := range changes {
		for _, t := range []*sandbox.Target{c.src, c.follow, c.dst} {
			if t != nil {
				if err := f.WouldWrite("patch", t, sandbox.Intent{Preview: preview}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := planDry(f, p, changes, opt); err != nil {
		return nil, err
	}
	for _, c := range changes {
		res.Files = append(res.Files, c.result)
	}
	return res, nil
}

// planDry reads every source as it is (through the fence, deny_read
// included) and plans each change; it checks that a creation's target
// does not exist.
func planDry(f *sandbox.Fence, p *patch.Patch, changes []*fileChange, opt PatchOptions) error {
	for _, c := range changes {
		if c.follow != nil {
			e := fserr.New(fserr.InvalidArgument, "patch: "+c.src.Given+": is a symlink; a patch removes and moves regular files only")
			e.Hint = "patch the file it names instead; nothing was changed"
			return e
		}
		if c.src != nil {
			file, err := openCurrent(f, "patch", *c.src)
			if err != nil {
				return err
			}
			var size int64
			if fi, err := file.Stat(); err == nil {
				size = fi.Size()
			}
			c.old, err = readAll(file, c.src.Given, size)
			file.Close()
			if err != nil {
				return err
			}
		}
		if c.dst != nil && c.dst != c.src {
			if _, err := os.Lstat(fsys.ToOS(c.dst.Path)); err == nil {
				return fserr.New(fserr.Exists, "patch: "+c.dst.Given+": the file exists; the patch creates it")
			}
		}
		if err := planChange(p, c, opt); err != nil {
			return err
		}
	}
	return nil
}

// previewPatch is what the approver of an escalated patch is shown: the
// whole patch's diff, every file in full, planned on the files as they
// are; and each file's hash, to which the patch is then pinned.
func previewPatch(f *sandbox.Fence, p *patch.Patch, opt PatchOptions) (sandbox.Preview, map[string]string, error) {
	changes, whole, err := previewChanges(f, p, opt)
	if err != nil {
		return sandbox.Preview{}, nil, err
	}
	sums := map[string]string{}
	for _, c := range changes {
		if c.src != nil {
			sums[c.src.Path] = c.oldSum
		}
	}
	return sandbox.Preview{Diff: whole, Text: whole.Text, Paths: patchPaths(changes)}, sums, nil
}

// previewChanges plans every change of p on the files as they are, each
// diff in full, and joins the diffs into the one an approver is shown.
func previewChanges(f *sandbox.Fence, p *patch.Patch, opt PatchOptions) ([]*fileChange, diff.Result, error) {
	changes, err := patchTargets(f, p, opt)
	if err != nil {
		return nil, diff.Result{}, err
	}
	opt.Diff.Form = diff.FormFull
	if err := planDry(f, p, changes, opt); err != nil {
		return nil, diff.Result{}, err
	}
	// One diff object, as write's and edit's approvers get: every file's
	// diff in the patch's order, the counts summed.
	var whole diff.Result
	var text strings.Builder
	for _, c := range changes {
		d := c.result.Diff
		whole.Added += d.Added
		whole.Removed += d.Removed
		whole.Truncated = whole.Truncated || d.Truncated
		if d.Omitted != "" {
			fmt.Fprintf(&text, "%s: %s, diff omitted (%s)\n", c.result.Path, c.result.Action, d.Omitted)
		}
		text.WriteString(d.Text)
	}
	whole.Text = text.String()
	return changes, whole, nil
}

// readAll reads the whole of an opened file, size bytes when it was
// opened, in one allocation unless it grew.
func readAll(file *os.File, given string, size int64) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(int(size) + bytes.MinRead)
	if _, err := b.ReadFrom(file); err != nil {
		return nil, fserr.FromOS("patch", given, err)
	}
	return b.Bytes(), nil
}
