package patch

import (
	"fmt"
	"strings"
)

// line is a file's line: its text and its terminator ("\n", "\r\n", or ""
// for a last line without one).
type line struct {
	body, term string
}

// split cuts text into lines, keeping each terminator.
func split(text string) []line {
	out := make([]line, 0, strings.Count(text, "\n")+1)
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, line{body: text})
			break
		}
		body, term := text[:i], "\n"
		if strings.HasSuffix(body, "\r") {
			body, term = body[:len(body)-1], "\r\n"
		}
		out = append(out, line{body: body, term: term})
		text = text[i+1:]
	}
	return out
}

func join(lines []line) string {
	n := 0
	for _, l := range lines {
		n += len(l.body) + len(l.term)
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range lines {
		b.WriteString(l.body)
		b.WriteString(l.term)
	}
	return b.String()
}

// matches reports whether the file's line is the hunk's line: the same
// text, the line ending aside. A patch typed with "\n" matches a CRLF
// file's line, and a diff of a CRLF file, which keeps its "\r", matches it
// too; nothing else is loosened.
func matches(f line, p Line) bool {
	want := strings.TrimSuffix(p.Text, "\r")
	if f.body != want {
		return false
	}
	// "\ No newline at end of file" on the old side: the file's line
	// must be its last, without a terminator.
	return !p.NoEOL || f.term == ""
}

// HunkError is a hunk that cannot be placed: which one, where its format
// says it should go, and why. AlreadyApplied says its new side is found
// where its old side should be: the file may hold the patch already.
type HunkError struct {
	Path string
	// Hunk is the hunk's number in its file, from 1; Line its header's
	// line in the patch.
	Hunk, Line int
	Reason     string
	// Old is the hunk's old side as text, for the closest region.
	Old            string
	AlreadyApplied bool
	// FoundAt is the line (from 1) where the old lines are, when they are
	// in the file but where the format's rules do not let the hunk go; 0
	// when they are nowhere.
	FoundAt int
}

func (e *HunkError) Error() string {
	return fmt.Sprintf("%s: hunk %d (patch line %d) does not apply: %s", e.Path, e.Hunk, e.Line, e.Reason)
}

// Apply applies f's hunks to text, the file's content as UTF-8 without a
// BOM, and returns the new content. New lines take the file's line ending
// (that of the lines around them: CRLF in a CRLF file), unless the patch
// line carries its own "\r". A unified hunk is placed by its line numbers
// (Unified); an apply_patch hunk by search (ApplyPatch). An Add's text
// is ignored: the new file is the hunk's added lines.
func Apply(format Format, f *File, text string) (string, error) {
	if f.Kind == Add {
		var out []line
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				out = appendLine(out, newLine(l, "\n"))
			}
		}
		return join(out), nil
	}
	lines := split(text)
	eol := dominantEOL(lines)
	var out []line
	var err error
	if format == Unified {
		out, err = applyUnified(f, lines, eol)
	} else {
		out, err = applyApplyPatch(f, lines, eol)
	}
	if err != nil {
		return "", err
	}
	if format == ApplyPatch && len(lines) > 0 && lines[len(lines)-1].term == "" && len(out) > 0 {
		// The format cannot say "no newline at end of file": the file
		// keeps what it had, as edit keeps it.
		out[len(out)-1].term = ""
	}
	return join(out), nil
}

// dominantEOL is the ending new lines take: CRLF where most of the file's
// lines end so.
func dominantEOL(lines []line) string {
	crlf, lf := 0, 0
	for _, l := range lines {
		switch l.term {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// newLine is the file line a hunk's added or context line becomes.
func newLine(p Line, eol string) line {
	l := line{body: p.Text, term: eol}
	if strings.HasSuffix(p.Text, "\r") {
		l = line{body: p.Text[:len(p.Text)-1], term: "\r\n"}
	}
	if p.NoEOL {
		l.term = ""
	}
	return l
}

// appendLine appends l, giving the line before it a terminator if it had
// none: only the last line may lack one.
func appendLine(out []line, l line) []line {
	if n := len(out); n > 0 && out[n-1].term == "" {
		out[n-1].term = "\n"
		if l.term == "\r\n" {
			out[n-1].term = "\r\n"
		}
	}
	return append(out, l)
}

// splice replaces old lines of the file, at, by the hunk's new side: its
// context lines keep the file's bytes, its added lines take eol.
func splice(out []line, file []line, at int, h Hunk, eol string) []line {
	k := at
	for _, l := range h.Lines {
		switch l.Op {
		case ' ':
			fl := file[k]
			if l.NoEOL {
				fl.term = ""
			}
			out = appendLine(out, fl)
			k++
		case '-':
			k++
		case '+':
			out = appendLine(out, newLine(l, localEOL(file, at, eol)))
		}
	}
	return out
}

// localEOL is the ending of the file's line at i (or the one before, at
// the end), falling back on the file's own: in a file of mixed endings,
// new lines end as their neighbours do.
func localEOL(file []line, i int, eol string) string {
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(file) && file[j].term != "" {
			return file[j].term
		}
	}
	return eol
}

func matchAt(file []line, at int, want []Line) bool {
	if at < 0 || at+len(want) > len(file) {
		return false
	}
	for i, w := range want {
		if !matches(file[at+i], w) {
			return false
		}
	}
	return true
}

// applyUnified places each hunk as git apply does, without fuzz: at the
// line its header gives, moved by what the hunks before it added or
// removed; failing that, at the nearest line where its old side matches
// exactly, searching both ways but never before the previous hunk's end.
// A hunk with no leading context that starts at line 1 (or 0) must match
// at the start, one with no trailing context at the end. A hunk with no
// context at all is placed at its line exactly (git's --unidiff-zero).
func applyUnified(f *File, file []line, eol string) ([]line, error) {
	out := make([]line, 0, len(file)+addedLines(f))
	pos, delta := 0, 0
	for n, h := range f.Hunks {
		old := h.Old()
		leading, trailing := contextRun(h.Lines, false), contextRun(h.Lines, true)
		hint := h.OldStart - 1 + delta
		if h.OldLines == 0 {
			hint = h.OldStart + delta
		}
		var at int
		var ok bool
		switch {
		case leading == 0 && trailing == 0:
			at, ok = hint, hint >= pos && matchAt(file, hint, old)
		default:
			atStart := leading == 0 && h.OldStart <= 1
			atEnd := trailing == 0
			at, ok = nearest(file, old, hint, pos, atStart, atEnd)
		}
		if !ok {
			e := &HunkError{Path: f.Path, Hunk: n + 1, Line: h.Line, Old: h.OldText(),
				Reason: fmt.Sprintf("its %d old lines are not at line %d, nor anywhere after the previous hunk", len(old), max(hint+1, 1))}
			switch at, found := nearest(file, old, hint, 0, false, false); {
			case len(old) == 0:
				e.Reason = fmt.Sprintf("line %d is past the end of the file (%d lines)", hint, len(file))
			case found && trailing == 0:
				e.FoundAt = at + 1
				e.Reason = fmt.Sprintf("it has no trailing context, so it must end at the end of the file, as git apply requires; its old lines are at line %d", at+1)
			case found && leading == 0 && h.OldStart <= 1:
				e.FoundAt = at + 1
				e.Reason = fmt.Sprintf("it has no leading context and starts at line %d, so it must match at the start of the file, as git apply requires; its old lines are at line %d", h.OldStart, at+1)
			case found:
				e.FoundAt = at + 1
				e.Reason = fmt.Sprintf("its old lines are at line %d, before the end of the previous hunk (line %d)", at+1, pos)
			}
			if _, found := nearest(file, h.New(), hint, pos, false, false); found && len(h.New()) > 0 {
				e.AlreadyApplied = true
			}
			return nil, e
		}
		out = append(out, file[pos:at]...)
		out = splice(out, file, at, h, eol)
		pos = at + len(old)
		delta += h.NewLines - h.OldLines
	}
	for _, l := range file[pos:] {
		out = appendLine(out, l)
	}
	return out, nil
}

// addedLines counts the lines f's hunks add, to size the result.
func addedLines(f *File) int {
	n := 0
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Op == '+' {
				n++
			}
		}
	}
	return n
}

// contextRun counts the context lines at the start (or, fromEnd, the end)
// of a hunk.
func contextRun(lines []Line, fromEnd bool) int {
	n := 0
	for i := range lines {
		l := lines[i]
		if fromEnd {
			l = lines[len(lines)-1-i]
		}
		if l.Op != ' ' {
			break
		}
		n++
	}
	return n
}

// nearest finds the match of want closest to hint, at or after from;
// atStart and atEnd pin it to the first or last possible line.
func nearest(file []line, want []Line, hint, from int, atStart, atEnd bool) (int, bool) {
	last := len(file) - len(want)
	switch {
	case atStart && atEnd:
		return 0, from == 0 && last == 0 && matchAt(file, 0, want)
	case atStart:
		return 0, from == 0 && matchAt(file, 0, want)
	case atEnd:
		return last, last >= from && matchAt(file, last, want)
	}
	hint = min(max(hint, from), max(last, from))
	for d := 0; hint-d >= from || hint+d <= last; d++ {
		if at := hint - d; at >= from && matchAt(file, at, want) {
			return at, true
		}
		if at := hint + d; d > 0 && at <= last && matchAt(file, at, want) {
			return at, true
		}
	}
	return 0, false
}

// applyApplyPatch places each hunk as Codex does: searched forward from
// the end of the previous hunk; "@@ text" first seeks the line text, and
// the hunk is searched after it; "*** End of File" anchors it at the
// end. A hunk whose old side ends in an empty line that is not found is
// tried once more without it (the file's last newline, written as an
// empty line). A hunk with only added lines goes after its @@ line, or at
// the end of the file when it has none. Matching is exact.
func applyApplyPatch(f *File, file []line, eol string) ([]line, error) {
	out := make([]line, 0, len(file)+addedLines(f))
	pos := 0
	for n, h := range f.Hunks {
		fail := func(reason string) error {
			e := &HunkError{Path: f.Path, Hunk: n + 1, Line: h.Line, Old: h.OldText(), Reason: reason}
			if newSide := h.New(); len(newSide) > 0 {
				if _, ok := seek(file, newSide, pos, h.EndOfFile); ok {
					e.AlreadyApplied = true
				}
			}
			return e
		}
		from := pos
		if h.HasContext {
			at, ok := seek(file, []Line{{Op: ' ', Text: h.Context}}, from, false)
			if !ok {
				return nil, fail(fmt.Sprintf("its @@ line %q is not in the file after line %d", clip(h.Context), from))
			}
			from = at + 1
		}
		old := h.Old()
		if len(old) == 0 {
			at := len(file)
			if h.HasContext {
				at = from
			}
			out = append(out, file[pos:at]...)
			out = splice(out, file, at, h, eol)
			pos = at
			continue
		}
		at, ok := seek(file, old, from, h.EndOfFile)
		if !ok && old[len(old)-1].Text == "" {
			h = dropLastEmpty(h)
			old = h.Old()
			at, ok = seek(file, old, from, h.EndOfFile)
		}
		if !ok {
			where := fmt.Sprintf("after line %d", from)
			if h.EndOfFile {
				where = "at the end of the file"
			}
			e := fail(fmt.Sprintf("its %d old lines are not in the file %s", len(old), where))
			if at, found := seek(file, old, 0, false); found {
				e.(*HunkError).FoundAt = at + 1
				e.(*HunkError).Reason += fmt.Sprintf("; they are at line %d", at+1)
			}
			return nil, e
		}
		out = append(out, file[pos:at]...)
		out = splice(out, file, at, h, eol)
		pos = at + len(old)
	}
	for _, l := range file[pos:] {
		out = appendLine(out, l)
	}
	return out, nil
}

// seek finds want in file at or after from, the first match; eof pins it
// to the end.
func seek(file []line, want []Line, from int, eof bool) (int, bool) {
	last := len(file) - len(want)
	if eof {
		return last, last >= from && matchAt(file, last, want)
	}
	for at := from; at <= last; at++ {
		if matchAt(file, at, want) {
			return at, true
		}
	}
	return 0, false
}

// dropLastEmpty removes the hunk's last old-side line, an empty one, and
// the new side's last line if it is empty too, as Codex retries.
func dropLastEmpty(h Hunk) Hunk {
	lines := append([]Line(nil), h.Lines...)
	drop := func(keep func(Line) bool) {
		for i := len(lines) - 1; i >= 0; i-- {
			if !keep(lines[i]) {
				if lines[i].Text == "" {
					lines = append(lines[:i], lines[i+1:]...)
				}
				return
			}
		}
	}
	if last := lines[len(lines)-1]; last.Op == ' ' {
		drop(func(Line) bool { return false }) // on both sides
	} else {
		drop(func(l Line) bool { return l.Op == '+' })
		drop(func(l Line) bool { return l.Op == '-' })
	}
	h.Lines = lines
	return h
}
