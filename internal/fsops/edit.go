package fsops

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/closest"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// EditOptions shape an edit.
type EditOptions struct {
	// Edits are applied in order, each to the content the previous one
	// left; all or nothing.
	Edits   []Replacement
	IfMatch string
	DryRun  bool
	Diff    diff.Options
	// Recall, when set, gives back the content the caller read, for the
	// diff of a stale IfMatch (StaleDetail.Diff).
	Recall Recall
}

// EditResult is the result of an edit.
type EditResult struct {
	Replacements   int    `json:"replacements"`
	SHA256         string `json:"sha256"`
	PreviousSHA256 string `json:"previous_sha256"`
	LineEndings    string `json:"line_endings"`
	// Encoding is the file's encoding, which the edit kept.
	Encoding string      `json:"encoding"`
	DryRun   bool        `json:"dry_run,omitempty"`
	Diff     diff.Result `json:"diff"`
	// Warnings say what the edit did that its caller may not have
	// meant (lineBreakWarning); absent when none.
	Warnings []string `json:"warnings,omitempty"`
}

// AmbiguousDetail is the detail of FS_EDIT_AMBIGUOUS.
type AmbiguousDetail struct {
	Edit  int   `json:"edit"`
	Count int   `json:"count"`
	Lines []int `json:"lines"`
	// Matches are the first maxAmbiguousShown matches with the text of
	// the line each starts on, so old can be made unique without a read.
	Matches []AmbiguousMatch `json:"matches"`
}

// AmbiguousMatch is one match of an ambiguous old text: the line it
// starts on, and that line's text (decoded, without its line ending or
// a BOM, cut at maxAmbiguousLineBytes and marked …).
type AmbiguousMatch struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// The bounds of an ambiguous edit's detail: its message names as many
// lines.
const (
	maxAmbiguousShown     = 20
	maxAmbiguousLineBytes = 200
)

// NoMatchDetail is the detail of FS_EDIT_NO_MATCH.
type NoMatchDetail struct {
	Edit    int             `json:"edit"`
	Closest *closest.Region `json:"closest,omitempty"`
}

// Edit replaces exact text in the file t. The critical section runs under
// the same exclusive lock as write: read, match, build, replace atomically,
// release; concurrent edits and writes never lose an update. Each edit's
// old text must occur exactly once unless ReplaceAll. Line endings, a BOM
// and the final newline are kept. The file is held in memory once; the
// last edit is written straight from it.
func Edit(f *sandbox.Fence, t sandbox.Target, opt EditOptions) (*EditResult, error) {
	if err := checkEdits(opt.Edits); err != nil {
		return nil, err
	}
	if opt.IfMatch != "" && !isSHA256(opt.IfMatch) {
		return nil, fserr.New(fserr.InvalidArgument, "edit: --if-match takes a SHA-256 in hex (64 characters)")
	}
	in := sandbox.Intent{Preview: func() (sandbox.Preview, error) { return previewEdit(f, t, &opt) }}
	if opt.DryRun {
		if err := f.WouldWrite("edit", &t, in); err != nil {
			return nil, err
		}
		return dryEdit(f, t, opt)
	}
	l, err := lockTarget(f, "edit", &t, in)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if !l.Exists() {
		return nil, notFound("edit", t.Given)
	}
	content, err := loadFile(l.File, l.Stat.Size, t.Given)
	if err != nil {
		return nil, err
	}
	defer content.release()
	res, last, err := planEdit(t.Given, content.data, opt)
	if err != nil {
		return nil, err
	}
	err = l.replace(func(tmp *os.File) (func() error, error) {
		_, err := last.writeTo(tmp)
		return nil, fserr.FromOS("edit", t.Given, err)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// dryEdit plans an edit on the file as it is, without a lock, and
// returns its result; nothing is written.
func dryEdit(f *sandbox.Fence, t sandbox.Target, opt EditOptions) (*EditResult, error) {
	file, err := openCurrent(f, "edit", t)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if err := t.CheckWritable("edit", file, func() error { return fsys.Faccessat(fsys.AT_FDCWD, t.Path, fsys.W_OK, fsys.AT_EACCESS) }); err != nil {
		return nil, err
	}
	fi, err := file.Stat()
	if err != nil {
		return nil, fserr.FromOS("edit", t.Given, err)
	}
	content, err := loadFile(file, fi.Size(), t.Given)
	if err != nil {
		return nil, err
	}
	defer content.release()
	res, _, err := planEdit(t.Given, content.data, opt)
	if err != nil {
		return nil, err
	}
	res.DryRun = true
	return res, nil
}

// checkEdits refuses edits that could only be mistakes.
func checkEdits(edits []Replacement) error {
	if len(edits) == 0 {
		return fserr.New(fserr.InvalidArgument, "edit: no edits given")
	}
	for i, e := range edits {
		which := ""
		if len(edits) > 1 {
			which = " (edit " + strconv.Itoa(i+1) + ")"
		}
		if e.Old == "" {
			return fserr.New(fserr.InvalidArgument, "edit: old text is empty"+which)
		}
		if e.Old == e.New {
			return fserr.New(fserr.InvalidArgument, "edit: old and new text are the same"+which)
		}
		switch {
		case e.Occurrence < 0 || e.Line < 0:
			return fserr.New(fserr.InvalidArgument, "edit: --occurrence and --line count from 1"+which)
		case e.Occurrence > 0 && e.Line > 0:
			return fserr.New(fserr.InvalidArgument, "edit: give --occurrence or --line, not both"+which)
		case (e.Occurrence > 0 || e.Line > 0) && e.ReplaceAll:
			return fserr.New(fserr.InvalidArgument, "edit: --occurrence and --line pick one match; --replace-all replaces every one"+which)
		}
	}
	return nil
}

// planEdit applies the edits to content, checks every count, and returns
// the result with the diff, and the last edit as a splice so the caller
// can write it straight from the buffer. Nothing is written here.
func planEdit(given string, content []byte, opt EditOptions) (*EditResult, splice, error) {
	enc, binary := text.Detect(content)
	if binary {
		e := fserr.New(fserr.Binary, "edit: "+given+": binary content")
		e.Hint = "write replaces a binary file whole"
		return nil, splice{}, e
	}
	sum := sha256.Sum256(content)
	res := &EditResult{PreviousSHA256: fmt.Sprintf("%x", sum[:]), LineEndings: enc.LineEndings(content), Encoding: enc.String()}
	if err := checkIfMatch("edit", given, opt.IfMatch, res.PreviousSHA256, staleBasis{now: content, held: true, recall: opt.Recall, diff: opt.Diff}); err != nil {
		return nil, splice{}, err
	}
	cur := content
	var sp splice
	for i, e := range opt.Edits {
		var err error
		if sp, err = locateIn(cur, enc, e.Old, e.New); err != nil {
			return nil, splice{}, unencodable(given, i, len(opt.Edits), err)
		}
		if sp, err = pickMatch(given, i, len(opt.Edits), sp, e); err != nil {
			return nil, splice{}, err
		}
		if err := checkCount(given, i, len(opt.Edits), sp, e); err != nil {
			return nil, splice{}, err
		}
		if w := lineBreakWarning(e); w != "" {
			if len(opt.Edits) > 1 {
				w = fmt.Sprintf("edit %d: %s", i+1, w)
			}
			res.Warnings = append(res.Warnings, w)
		}
		res.Replacements += len(sp.at)
		if i < len(opt.Edits)-1 {
			cur = sp.bytes()
		}
	}
	h := sha256.New()
	sp.writeTo(h)
	res.SHA256 = hexSum(h)
	if int64(len(content)) > opt.Diff.BasisMaxBytes || int64(sp.size()) > opt.Diff.BasisMaxBytes {
		res.Diff = diff.Omitted(diff.ReasonBasisTooLarge)
	} else {
		before, after := content, sp.bytes()
		if !enc.IsUTF8() {
			// The diff is of the text, in UTF-8, as the model reads it.
			before, after = enc.Decode(before), enc.Decode(after)
		}
		res.Diff = diff.Unified(given, before, after, opt.Diff)
	}
	return res, sp, nil
}

// unencodable is the error of a new text the file's encoding cannot store.
func unencodable(given string, i, n int, err error) error {
	which := ""
	if n > 1 {
		which = fmt.Sprintf(" (edit %d of %d)", i+1, n)
	}
	var ue *text.UnencodableError
	if !errors.As(err, &ue) {
		return fserr.Wrap(fserr.InvalidArgument, "edit: "+given+": "+err.Error()+which, err)
	}
	e := fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("edit: %s: new text has %q (%U), which %s cannot store%s",
		given, ue.Rune, ue.Rune, ue.Encoding, which), err)
	e.Hint = "the file keeps its encoding; use characters it can store, or write the file whole; nothing was changed"
	return e
}

func checkCount(given string, i, n int, sp splice, e Replacement) error {
	which := ""
	if n > 1 {
		which = fmt.Sprintf(" (edit %d of %d)", i+1, n)
	}
	switch {
	case len(sp.at) == 0:
		c := closest.Find(sp.text(), e.Old)
		msg := "edit: " + given + ": old text not found" + which
		err := fserr.New(fserr.EditNoMatch, msg)
		err.Detail = NoMatchDetail{Edit: i + 1, Closest: c}
		switch {
		case c != nil && c.LiteralEscapes:
			err.Msg += fmt.Sprintf("; lines %d-%d are close: %s", c.StartLine, c.EndLine, strings.Join(c.Differences, "; "))
			err.Hint = "old holds escape sequences the file does not: pass the real characters (--old-file reads them from a file), or copy detail.closest.text exactly into old; nothing was changed"
		case c != nil:
			err.Msg += fmt.Sprintf("; lines %d-%d are close: %s", c.StartLine, c.EndLine, strings.Join(c.Differences, "; "))
			err.Hint = "copy detail.closest.text exactly into old; nothing was changed"
		default:
			err.Hint = "read the file and copy the text exactly, white space included; nothing was changed"
		}
		if n > 1 {
			err.Hint += "; for many changes to a file, patch applies one diff"
		}
		return err
	case len(sp.at) > 1 && !e.ReplaceAll:
		lines := sp.lines()
		err := fserr.New(fserr.EditAmbiguous, fmt.Sprintf("edit: %s: %d matches for old text%s (lines %s)",
			given, len(lines), which, joinInts(lines, 20)))
		err.Detail = AmbiguousDetail{Edit: i + 1, Count: len(lines), Lines: lines,
			Matches: lineTexts(sp.text(), lines[:min(len(lines), maxAmbiguousShown)])}
		err.Hint = "add surrounding lines to old until it is unique, pick one match with --occurrence N or --line N, or pass --replace-all; to change several of them differently, patch applies one diff; nothing was changed"
		return err
	}
	return nil
}

// pickMatch keeps, of sp's matches, the one e.Occurrence or e.Line
// picks; without a pick, or without a match (checkCount's no-match), sp
// is returned as it is. A pick that names no match is FS_EDIT_NO_MATCH
// with every match's line, as FS_EDIT_AMBIGUOUS gives them.
func pickMatch(given string, i, n int, sp splice, e Replacement) (splice, error) {
	if (e.Occurrence == 0 && e.Line == 0) || len(sp.at) == 0 {
		return sp, nil
	}
	lines := sp.lines()
	var what string
	switch {
	case e.Occurrence > 0 && e.Occurrence <= len(sp.at):
		sp.at = sp.at[e.Occurrence-1 : e.Occurrence]
		return sp, nil
	case e.Occurrence > 0:
		what = fmt.Sprintf("--occurrence %d is out of range", e.Occurrence)
	default:
		first := slices.Index(lines, e.Line)
		last := first
		for last >= 0 && last+1 < len(lines) && lines[last+1] == e.Line {
			last++
		}
		switch {
		case first >= 0 && first == last:
			sp.at = sp.at[first : first+1]
			return sp, nil
		case first >= 0:
			what = fmt.Sprintf("--line %d: %d matches start on that line (pick one with --occurrence %d to %d)", e.Line, last-first+1, first+1, last+1)
		default:
			what = fmt.Sprintf("--line %d: no match starts on that line", e.Line)
		}
	}
	which := ""
	if n > 1 {
		which = fmt.Sprintf(" (edit %d of %d)", i+1, n)
	}
	err := fserr.New(fserr.EditNoMatch, fmt.Sprintf("edit: %s: %s; old text has %d %s%s (lines %s)",
		given, what, len(lines), plural(len(lines), "match", "matches"), which, joinInts(lines, maxAmbiguousShown)))
	err.Detail = AmbiguousDetail{Edit: i + 1, Count: len(lines), Lines: lines,
		Matches: lineTexts(sp.text(), lines[:min(len(lines), maxAmbiguousShown)])}
	err.Hint = "pick a match the lines above name; nothing was changed"
	return sp, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The warnings of lineBreakWarning, stable wording.
const (
	WarnAddsLineBreak    = "new text ends in a line break and old text does not: the edit adds a line break (a heredoc's last newline?)"
	WarnRemovesLineBreak = "old text ends in a line break and new text does not: the edit removes a line break, joining the next line to the new text"
)

// lineBreakWarning is the warning of an edit whose new text ends in a
// line break its old text does not end in, or the other way round: the
// commonest silent slip (--new-file - from a heredoc ends in a newline
// that --old typed on the command line lacks). An empty new text
// deletes, line break and all, on purpose: no warning.
func lineBreakWarning(e Replacement) string {
	oldNL, newNL := strings.HasSuffix(e.Old, "\n"), strings.HasSuffix(e.New, "\n")
	switch {
	case newNL && !oldNL:
		return WarnAddsLineBreak
	case oldNL && !newNL && e.New != "":
		return WarnRemovesLineBreak
	}
	return ""
}

// lineTexts returns the text of each of lines (ascending, counted from
// 1, repeats allowed) in the UTF-8 text content.
func lineTexts(content []byte, lines []int) []AmbiguousMatch {
	content = bytes.TrimPrefix(content, []byte("\uFEFF"))
	out := make([]AmbiguousMatch, 0, len(lines))
	line, start := 1, 0
	for _, want := range lines {
		for line < want && start <= len(content) {
			next := bytes.IndexByte(content[start:], '\n')
			if next < 0 {
				start = len(content) + 1
				break
			}
			start += next + 1
			line++
		}
		rest := content[min(start, len(content)):]
		if end := bytes.IndexByte(rest, '\n'); end >= 0 {
			rest = rest[:end]
		}
		out = append(out, AmbiguousMatch{Line: want, Text: text.CutLine(bytes.TrimSuffix(rest, []byte{'\r'}), maxAmbiguousLineBytes)})
	}
	return out
}

func joinInts(xs []int, most int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == most {
			fmt.Fprintf(&b, ", … %d more", len(xs)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

func notFound(op, given string) error {
	return fserr.New(fserr.NotFound, op+": "+given+": no such file")
}
