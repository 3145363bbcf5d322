package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/search"
)

// ANSI colors for a diff on a terminal.
const (
	colorReset = "\x1b[0m"
	colorBold  = "\x1b[1m"
	colorRed   = "\x1b[31m"
	colorGreen = "\x1b[32m"
	colorCyan  = "\x1b[36m"
)

// Text renders results for people and models (--output text). A
// success puts everything on stdout, the notes about it (truncation, a
// cursor, the new sha256) after the content: a model's harness often
// shows it stdout alone, and a note it never sees costs a call. A
// failure goes to the notes stream, stderr.
type Text struct {
	// Out is standard output; Note the notes stream of a failure,
	// standard error.
	Out, Note io.Writer
	// Color colors a diff (a terminal).
	Color bool
}

// textRenderer is a result that renders itself as text: one whose
// front end alone knows its shape (the CLI's policy).
type textRenderer interface {
	WriteText(w io.Writer) error
}

// usageDetail is the detail of a usage error (the CLI's), which a
// failure's text shows as the command's usage line.
type usageDetail interface {
	UsageLine() string
}

// Result writes one success result as text, notes included, on stdout.
func (t Text) Result(h Header, result any) error {
	t.Note = t.Out
	h.Path, h.Resolved = osPath(h.Path), osPath(h.Resolved)
	switch r := result.(type) {
	case *fsops.ReadResult:
		return t.read(h, r)
	case *fsops.ListResult:
		return t.list(r)
	case *fsops.StatResult:
		return t.stat(h, r)
	case *search.GrepResult:
		return t.grep(r)
	case *search.FindResult:
		return t.find(r)
	case *fsops.WriteResult:
		t.mutation(r.Diff, fmt.Sprintf("%s %d bytes to %s", tense(r.DryRun, "wrote", "would write"), r.Bytes, h.Path), r.SHA256)
	case *fsops.EditResult:
		t.mutation(r.Diff, fmt.Sprintf("%s %d occurrence(s) in %s", tense(r.DryRun, "replaced", "would replace"), r.Replacements, h.Path), r.SHA256)
		t.warnings(r.Warnings)
	case *fsops.EditFilesResult:
		t.editFiles(r)
	case *fsops.PatchResult:
		t.patch(r)
	case textRenderer:
		if !osSpelled() {
			return r.WriteText(t.Out)
		}
		// A front end's own words (policy's settings and roots): the
		// paths within them as the OS spells them.
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			return err
		}
		_, err := io.WriteString(t.Out, osPathsIn(b.String()))
		return err
	default:
		return fmt.Errorf("no text rendering for %T", result)
	}
	return nil
}

// read prints a header line, "PATH: lines A-B of N, sha256 HEX", then the
// window's lines numbered as `cat -n` numbers them, so the text can be
// copied without JSON escapes and the hash passed to --if-match.
func (t Text) read(h Header, r *fsops.ReadResult) error {
	if _, err := fmt.Fprintln(t.Out, readHeader(h.Path, r)); err != nil {
		return err
	}
	lines := strings.SplitAfter(r.Content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if err := t.numbered(r.StartLine, lines); err != nil {
		return err
	}
	if r.CutLine != 0 {
		fmt.Fprintf(t.Note, "(line %d was cut at the byte budget)\n", r.CutLine)
	}
	if r.NextOffset != 0 {
		fmt.Fprintf(t.Note, "(lines %d-%d of %d; continue with --offset %d)\n", r.StartLine, r.EndLine, r.TotalLines, r.NextOffset)
	}
	return nil
}

// readHeader describes a read window: where it is, the hash of the whole
// file, and the line endings and encoding when they are not plain.
func readHeader(path string, r *fsops.ReadResult) string {
	var where string
	switch {
	case r.TotalLines == 0:
		where = "empty"
	case r.PastEnd:
		where = fmt.Sprintf("past the end, the file has %d %s", r.TotalLines, plural(r.TotalLines, "line", "lines"))
	default:
		where = fmt.Sprintf("lines %d-%d of %d", r.StartLine, r.EndLine, r.TotalLines)
	}
	s := fmt.Sprintf("%s: %s, sha256 %s", path, where, r.SHA256)
	if r.LineEndings != "lf" && r.LineEndings != "none" && r.LineEndings != "" {
		s += ", " + r.LineEndings + " line endings"
	}
	if r.Encoding != "utf-8" && r.Encoding != "" {
		s += ", " + r.Encoding
	}
	return s
}

// numbered prints lines, the first numbered from, as `cat -n` does: the
// number right-aligned in six columns, a tab, the line without its line
// break.
func (t Text) numbered(from int, lines []string) error {
	for i, l := range lines {
		l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		if _, err := fmt.Fprintf(t.Out, "%6d\t%s\n", from+i, l); err != nil {
			return err
		}
	}
	return nil
}

func (t Text) list(r *fsops.ListResult) error {
	width := 1
	for _, e := range r.Entries {
		width = max(width, len(fmt.Sprint(e.Size)))
	}
	for _, e := range r.Entries {
		name := e.Name
		if e.Target != "" {
			name += " -> " + e.Target
		}
		if e.Error != nil {
			name += " (" + string(e.Error.Code) + ": " + e.Error.Message + ")"
		}
		mtime := e.Mtime
		if len(mtime) > 19 {
			mtime = mtime[:19] // to the second, as ls shows it
		}
		if _, err := fmt.Fprintf(t.Out, "%-7s %s %*d %s %s\n", e.Type, e.Perm, width, e.Size, mtime, name); err != nil {
			return err
		}
	}
	if r.Truncated {
		fmt.Fprintf(t.Note, "(%d of %d entries; raise --limit for more)\n", len(r.Entries), r.Total)
	}
	if r.Hidden > 0 {
		fmt.Fprintf(t.Note, "(%d entries hidden by deny_read)\n", r.Hidden)
	}
	return nil
}

// grep prints matches as grep -n does, "path:line:text", with context
// lines as "path-line-text" and "--" between groups that do not touch;
// --files prints paths, --count "path:count".
func (t Text) grep(r *search.GrepResult) error {
	var b strings.Builder
	for _, f := range r.Files {
		if f.Count > 0 {
			fmt.Fprintf(&b, "%s:%d\n", osPath(f.Path), f.Count)
		} else {
			fmt.Fprintf(&b, "%s\n", osPath(f.Path))
		}
	}
	ctx := hasContext(r)
	lastPath, lastLine := "", 0 // the last line printed
	for i, m := range r.Matches {
		if m.Path != lastPath {
			lastLine = 0
		}
		shown := osPath(m.Path)
		first := m.Line - len(m.Before)
		if ctx && lastPath != "" && (m.Path != lastPath || first > lastLine+1) {
			b.WriteString("--\n")
		}
		for j, l := range m.Before {
			if n := first + j; n > lastLine {
				fmt.Fprintf(&b, "%s-%d-%s\n", shown, n, l)
			}
		}
		fmt.Fprintf(&b, "%s:%d:%s\n", shown, m.Line, m.Text)
		lastPath, lastLine = m.Path, m.Line
		next := 0 // the next match's line in this file: context stops there
		if i+1 < len(r.Matches) && r.Matches[i+1].Path == m.Path {
			next = r.Matches[i+1].Line
		}
		for j, l := range m.After {
			n := m.Line + 1 + j
			if next != 0 && n >= next {
				break
			}
			fmt.Fprintf(&b, "%s-%d-%s\n", shown, n, l)
			lastLine = n
		}
	}
	if r.Total == 0 && !r.Truncated {
		fmt.Fprintf(&b, "(no matches; %d %s searched)\n", r.FilesSearched, plural(r.FilesSearched, "file", "files"))
	}
	if _, err := io.WriteString(t.Out, b.String()); err != nil {
		return err
	}
	t.searchNotes(r.Truncated, len(r.Matches)+len(r.Files), r.Total, r.Cursor, r.Hidden)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func hasContext(r *search.GrepResult) bool {
	for _, m := range r.Matches {
		if len(m.Before) > 0 || len(m.After) > 0 {
			return true
		}
	}
	return false
}

// find prints one entry a line, as ls does without perm and mtime: its
// type, its size and its path, so a "largest files" question is answered
// without a stat of each.
func (t Text) find(r *search.FindResult) error {
	var b strings.Builder
	width := 1
	for _, e := range r.Entries {
		width = max(width, len(strconv.FormatInt(e.Size, 10)))
	}
	for _, e := range r.Entries {
		fmt.Fprintf(&b, "%-7s %*d ", e.Type, width, e.Size)
		switch {
		case e.Lines != nil:
			fmt.Fprintf(&b, "%7d lines ", *e.Lines)
		case e.LinesSkipped != "":
			fmt.Fprintf(&b, "%7s lines ", "-")
		}
		if e.Mtime != "" {
			b.WriteString(e.Mtime + " ")
		}
		b.WriteString(osPath(e.Path) + "\n")
	}
	if r.Total == 0 && !r.Truncated {
		b.WriteString("(no entries match)\n")
	}
	if _, err := io.WriteString(t.Out, b.String()); err != nil {
		return err
	}
	t.searchNotes(r.Truncated, len(r.Entries), r.Total, r.Cursor, r.Hidden)
	return nil
}

// searchNotes says on the notes stream what a search left out.
func (t Text) searchNotes(truncated bool, shown, total int, cursor string, hidden int) {
	if truncated {
		fmt.Fprintf(t.Note, "(%d of %d shown; continue with --after %s)\n", shown, total, cursor)
	}
	if hidden > 0 {
		fmt.Fprintf(t.Note, "(%d entries hidden by deny_read)\n", hidden)
	}
}

func (t Text) stat(h Header, r *fsops.StatResult) error {
	tw := tabwriter.NewWriter(t.Out, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "path:\t%s\nresolved:\t%s\nexists:\t%t\n", h.Path, h.Resolved, r.Exists)
	if r.Exists {
		fmt.Fprintf(tw, "type:\t%s\nsize:\t%d\nperm:\t%s\nmtime:\t%s\n", r.Type, r.Size, r.Perm, r.Mtime)
	}
	if r.Target != "" {
		fmt.Fprintf(tw, "target:\t%s\n", r.Target)
	}
	writable := fmt.Sprint(r.Writable)
	if r.WritableReason != "" {
		writable += " (" + r.WritableReason + ")"
	}
	fmt.Fprintf(tw, "writable:\t%s\nmode:\t%s\n", writable, h.Mode)
	if r.Shell != "" {
		fmt.Fprintf(tw, "shell:\t%s\n", osPathsIn(r.Shell))
	}
	if r.WayForward != "" {
		fmt.Fprintf(tw, "way forward:\t%s\n", osPathsIn(r.WayForward))
	}
	return tw.Flush()
}

// mutation prints a write's or an edit's diff, then what was done on the
// notes stream, with the new content's full sha256, which --if-match
// takes.
func (t Text) mutation(d diff.Result, done, sum string) {
	t.diff(d)
	fmt.Fprintf(t.Note, "%s (sha256 %s)\n", done, sum)
}

// warnings prints a result's warnings, one a line, on the notes stream.
func (t Text) warnings(ws []string) {
	for _, w := range ws {
		fmt.Fprintf(t.Note, "warning: %s\n", w)
	}
}

// tense is the verb for what was done, or, in a dry run, would be.
func tense(dryRun bool, done, would string) string {
	if dryRun {
		return would
	}
	return done
}

// diff prints a diff, colored on a terminal.
func (t Text) diff(d diff.Result) {
	if d.Omitted != "" {
		fmt.Fprintf(t.Note, "(diff omitted: %s)\n", d.Omitted)
		return
	}
	if d.Summary {
		fmt.Fprintf(t.Note, "(diff summary: %d line(s) added, %d removed; --diff full shows them)\n", d.Added, d.Removed)
		return
	}
	for _, line := range strings.SplitAfter(d.Text, "\n") {
		if line == "" {
			continue
		}
		color := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			color = colorBold
		case strings.HasPrefix(line, "@@"):
			color = colorCyan
		case strings.HasPrefix(line, "+"):
			color = colorGreen
		case strings.HasPrefix(line, "-"):
			color = colorRed
		}
		if t.Color && color != "" {
			fmt.Fprint(t.Out, color+strings.TrimSuffix(line, "\n")+colorReset+"\n")
		} else {
			fmt.Fprint(t.Out, line)
		}
	}
	if d.Truncated {
		fmt.Fprintln(t.Note, "(diff truncated at diff_max_bytes)")
	}
}

// Failure prints a failed call for people on the notes stream: the
// message, the marker of a denial, and what to do.
func (t Text) Failure(f Failure) {
	// The code ends the line: what a person reads first is the
	// message, what a script or the reference looks up is the code.
	fmt.Fprintf(t.Note, "dsh-fs: %s (%s)\n", f.Error.Message, f.Error.Code)
	switch d := f.Error.Detail.(type) {
	case usageDetail:
		fmt.Fprintf(t.Note, "usage: %s\n", d.UsageLine())
	case fsops.AmbiguousDetail:
		// Each match's line, numbered as read numbers lines, to make
		// old unique or pick one with --line.
		fmt.Fprintf(t.Note, "matches in %s:\n", f.Path)
		for _, m := range d.Matches {
			Text{Out: t.Note}.numbered(m.Line, []string{m.Text})
		}
		if d.Count > len(d.Matches) {
			fmt.Fprintf(t.Note, "(%d more not shown)\n", d.Count-len(d.Matches))
		}
	case fsops.StaleDetail:
		// What changed since the read, so the retry needs no read.
		if d.Diff != nil {
			Text{Out: t.Note, Note: t.Note}.diff(*d.Diff)
		}
	case fsops.NoMatchDetail:
		// The region to copy, numbered as read numbers lines.
		if c := d.Closest; c != nil {
			fmt.Fprintf(t.Note, "closest region, %s lines %d-%d:\n", f.Path, c.StartLine, c.EndLine)
			Text{Out: t.Note}.numbered(c.StartLine, strings.Split(c.Text, "\n"))
		}
	}
	if f.Marker != "" {
		fmt.Fprintln(t.Note, f.Marker)
	}
	if f.Error.Hint != "" {
		fmt.Fprintf(t.Note, "hint: %s\n", f.Error.Hint)
	}
	if f.Escalation != nil {
		fmt.Fprintf(t.Note, "hint: %s\n", f.Escalation.Hint)
	}
}

// editFiles prints, per file, its diff when the result carries one, then
// its line, as patch does: what was done to it, its counts when the diff
// is a summary (the default for several files), and its new sha256; then
// the files a glob found without the old text, and the warnings.
func (t Text) editFiles(r *fsops.EditFilesResult) {
	for _, f := range r.Files {
		if !f.Diff.Summary {
			t.diff(f.Diff)
		}
		line := fmt.Sprintf("%s: %s %d occurrence(s)", f.Path, tense(r.DryRun, "replaced", "would replace"), f.Replacements)
		if f.Diff.Summary {
			line += fmt.Sprintf(", %d line(s) added, %d removed", f.Diff.Added, f.Diff.Removed)
		}
		fmt.Fprintf(t.Out, "%s (sha256 %s)\n", line, f.SHA256)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(t.Out, "(no match, left alone: %s)\n", strings.Join(r.Skipped, ", "))
	}
	t.warnings(r.Warnings)
}

// patch prints, per file, its diff when the result carries one, then its
// line: what was done to it, its counts when the diff is a summary (patch's
// default), and its new sha256, which --if-match takes. The lines go to
// stdout with the diffs: they are what the model needs next.
func (t Text) patch(r *fsops.PatchResult) {
	for _, f := range r.Files {
		if !f.Diff.Summary {
			t.diff(f.Diff)
		}
		what := f.Action
		if r.DryRun {
			what = "would be " + what
		}
		line := fmt.Sprintf("%s: %s", f.Path, what)
		if f.From != "" {
			line += " from " + f.From
		}
		if f.Diff.Summary {
			line += fmt.Sprintf(", %d line(s) added, %d removed", f.Diff.Added, f.Diff.Removed)
		}
		if f.SHA256 != "" {
			line += " (sha256 " + f.SHA256 + ")"
		}
		fmt.Fprintln(t.Out, line)
	}
}
