// Package diff computes the bounded context diff that write and edit report
// (docs/design.md §6): a unified diff of a file's old and new content, omitted
// with a reason when a side is too large or binary, cut at a byte limit.
//
// The hunks are printed exactly as GNU `diff -u` prints them (same hunk
// headers, same "\ No newline at end of file" lines); only the file headers
// differ ("--- a/<name>" and "+++ b/<name>", no timestamps, as git does).
// Lines are paired by difflib's SequenceMatcher (longest run of unchanged
// lines first), then runs of changes are slid where GNU diff puts them; when
// several pairings are possible, the one chosen can still differ from GNU's
// (Myers' algorithm), and it is not always the shortest. Any difference is
// a correct diff: applied to old, it gives new.
//
// This package is the only importer of go-difflib.
package diff

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/dshfs/dsh-fs/internal/text"
)

// Options bound the diff. The zero value means no context and no limits.
type Options struct {
	// Context is the number of unchanged lines shown around each change
	// (diff_context, 3 by default); negative is treated as 0.
	Context int
	// BasisMaxBytes omits the diff as ReasonBasisTooLarge when either side
	// is larger than this many bytes (diff_basis_max_bytes); <= 0 means no
	// limit. It bounds the time and memory a diff may take.
	BasisMaxBytes int64
	// MaxBytes cuts the diff text, headers included, to at most this many
	// bytes (diff_max_bytes), at a line boundary, and sets Truncated;
	// <= 0 means no limit.
	MaxBytes int
	// Form says how much of the diff to give (write and edit's --diff):
	// the zero value is FormAuto.
	Form Form
}

// Form is how much of a diff a result carries.
type Form string

// The forms of --diff (docs/design.md §6).
const (
	// FormAuto is a summary for a created file, whose every line the
	// caller just sent, and the unified diff otherwise.
	FormAuto Form = "auto"
	// FormFull is always the unified diff.
	FormFull Form = "full"
	// FormSummary is always a summary: the counts, no text.
	FormSummary Form = "summary"
)

// ParseForm reads a --diff value; "" is FormAuto.
func ParseForm(s string) (Form, bool) {
	switch f := Form(s); f {
	case "", FormAuto:
		return FormAuto, true
	case FormFull, FormSummary:
		return f, true
	}
	return "", false
}

// maxContext caps Options.Context so that 2*Context, the largest gap
// between changes that still shares a hunk, cannot overflow an int.
const maxContext = 1 << 28

// matchBudget bounds the work of difflib's SequenceMatcher. Its cost grows
// with the pairs of equal lines it can line up (a line of old with an equal
// line of new), about a microsecond per pair: tens of thousands of pairs
// take milliseconds; a rewritten file of short repeated lines, millions of
// pairs, would take minutes. Under the budget, every line may anchor a
// match, which gives the shortest, GNU-like diffs; over it, the popular
// lines are left out of the anchors (difflib's autojunk: lines making up
// over 1% of a middle of 200 lines or more); if that is still over, the
// changed middle is shown as one replacement (a longer diff, still right).
const matchBudget = 1 << 16

// Unified compares old and new, the whole contents of the file shown as
// name, and returns the bounded diff, headed "--- a/<name>" and
// "+++ b/<name>" (name quoted as git quotes it). A side over
// opt.BasisMaxBytes gives Omitted(ReasonBasisTooLarge), a side that is
// not text Omitted(ReasonBinary), equal contents the no-change result;
// lines are compared with their terminators. With opt.Form FormSummary
// the result is a summary (Result.Summary). Unified never fails, never
// panics, and neither modifies nor retains old and new.
func Unified(name string, old, new []byte, opt Options) Result {
	r := unified(label("a/", name), label("b/", name), old, new, opt)
	if opt.Form == FormSummary {
		return r.summary()
	}
	return r
}

// UnifiedCreated is Unified for a file that did not exist before: the old
// side is empty and its header is "--- /dev/null", as git and `diff -N`
// show a new file. Creating an empty file is no change (empty Text).
//
// Unless opt.Form is FormFull, the result is a summary: Added counts the
// new file's lines, and no text repeats what the caller just sent. A side
// over opt.BasisMaxBytes or binary is still Omitted.
func UnifiedCreated(name string, new []byte, opt Options) Result {
	if opt.Form != FormFull {
		if r, ok := precheck(nil, new, opt); !ok {
			return r
		}
		return Result{Added: countLines(new), Summary: true}
	}
	return unified("/dev/null", label("b/", name), nil, new, opt)
}

// precheck gives the result of a comparison that is not computed: a side
// over the basis limit or binary. ok says the diff can be computed.
func precheck(old, new []byte, opt Options) (Result, bool) {
	if lim := opt.BasisMaxBytes; lim > 0 && (int64(len(old)) > lim || int64(len(new)) > lim) {
		return Omitted(ReasonBasisTooLarge), false
	}
	if text.IsBinary(old) || text.IsBinary(new) {
		return Omitted(ReasonBinary), false
	}
	return Result{}, true
}

// countLines counts b's lines as a diff counts them: a last line without
// a newline is a line.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func unified(oldLabel, newLabel string, old, new []byte, opt Options) Result {
	if r, ok := precheck(old, new, opt); !ok {
		return r
	}
	if bytes.Equal(old, new) {
		return Result{}
	}
	ctx := min(max(opt.Context, 0), maxContext)
	s := compare(old, new, ctx)

	var r Result
	for _, c := range s.changes {
		r.Removed += c.a1 - c.a0
		r.Added += c.b1 - c.b0
	}
	w := &boundedWriter{limit: opt.MaxBytes}
	w.write("--- " + oldLabel + "\n")
	w.write("+++ " + newLabel + "\n")
	s.writeHunks(w, ctx)
	r.Text, r.Truncated = w.text()
	return r
}

// script is the edit script of a comparison, restricted to a window of
// each side: the changed middle plus up to ctx lines of the common prefix
// before it and of the common suffix after it, which is all a hunk can
// show. Outside the window both sides are equal and never split in lines.
type script struct {
	a, b    []string // window lines of old and new, each with its terminator
	base    int      // 0-based line number, in both files, of a[0] and b[0]
	changes []change // in window coordinates, ascending, never adjacent
}

// change replaces a[a0:a1] by b[b0:b1]; one of the two may be empty.
type change struct{ a0, a1, b0, b1 int }

// compare computes the script of old and new, which differ. The common
// prefix and suffix lines are trimmed with byte comparisons first, so a
// small change in a large file costs a scan of the file and a match of a
// few lines, and only the window is copied.
func compare(old, new []byte, ctx int) script {
	// The prefix ends after the last line it holds whole, terminator
	// included: "a" and "a\n" are different lines.
	p := commonPrefix(old, new)
	p = bytes.LastIndexByte(old[:p], '\n') + 1

	// The suffix starts at the first position that starts a line in both.
	// Inside the common bytes, a '\n' ends a line in both files; at their
	// very start, each file must have a line start of its own.
	n := commonSuffix(old[p:], new[p:])
	oe, ne := len(old)-n, len(new)-n
	if !isLineStart(old, oe) || !isLineStart(new, ne) {
		i := bytes.IndexByte(old[oe:], '\n')
		if i < 0 {
			oe, ne = len(old), len(new)
		} else {
			oe, ne = oe+i+1, ne+i+1
		}
	}

	ws, before := linesBack(old, p, ctx)
	s := script{
		a:    splitLines(string(old[ws:oe])),
		b:    splitLines(string(new[ws:ne])),
		base: bytes.Count(old[:ws], []byte{'\n'}),
	}
	changedA, changedB := match(s.a[before:], s.b[before:])

	// Slide the runs of changes as GNU diff does, old's then new's. A run
	// that ends the middle may go on sliding into the common suffix: the
	// suffix lines it passes join the middle.
	extend := func(k int) {
		end, _ := linesForward(old, oe, k)
		more := splitLines(string(old[oe:end]))
		s.a, s.b = append(s.a, more...), append(s.b, more...)
		changedA, changedB = append(changedA, make([]bool, k)...), append(changedB, make([]bool, k)...)
		oe, ne = end, ne+(end-oe)
	}
	slide(s.a[before:], changedA, changedB)
	if k := slideRoom(s.a[before:], changedA, changedB, old[oe:]); k > 0 {
		extend(k)
		slide(s.a[before:], changedA, changedB)
	}
	slide(s.b[before:], changedB, changedA)
	if k := slideRoom(s.b[before:], changedB, changedA, new[ne:]); k > 0 {
		extend(k)
		slide(s.b[before:], changedB, changedA)
	}
	for _, c := range changes(changedA, changedB) {
		s.changes = append(s.changes, change{c.a0 + before, c.a1 + before, c.b0 + before, c.b1 + before})
	}

	// Context after the last change, from the common suffix.
	end, _ := linesForward(old, oe, ctx)
	after := splitLines(string(old[oe:end]))
	s.a, s.b = append(s.a, after...), append(s.b, after...)
	return s
}

// match returns which lines of a and of b are changed, as difflib's
// SequenceMatcher sees them.
func match(a, b []string) (changedA, changedB []bool) {
	changedA, changedB = make([]bool, len(a)), make([]bool, len(b))
	if len(a) == 0 || len(b) == 0 {
		fill(changedA)
		fill(changedB)
		return changedA, changedB
	}
	pairs, unpopularPairs := equalPairs(a, b)
	if unpopularPairs > matchBudget {
		fill(changedA)
		fill(changedB)
		return changedA, changedB
	}
	m := difflib.NewMatcherWithJunk(a, b, pairs > matchBudget, nil)
	for _, op := range m.GetOpCodes() {
		if op.Tag != 'e' {
			fill(changedA[op.I1:op.I2])
			fill(changedB[op.J1:op.J2])
		}
	}
	return changedA, changedB
}

// slideRoom returns how many lines of rest, the common suffix after x, the
// run of changes that ends x can slide over, as slide would if rest were
// part of x. It is 0 unless the run faces no change of the other file
// (otherwise slide keeps it facing it): the other file ends unchanged.
func slideRoom(x []string, changed, otherChanged []bool, rest []byte) int {
	n := len(changed)
	if n == 0 || !changed[n-1] || (len(otherChanged) > 0 && otherChanged[len(otherChanged)-1]) {
		return 0
	}
	s := n - 1
	for s > 0 && changed[s-1] {
		s--
	}
	run := x[s:n]
	// The run can move down one line when the line after it equals its
	// first line; after k moves, its first line is run[k] or, past the
	// run, the suffix line len(run) lines behind the next one.
	k, lag := 0, 0
	for pos := 0; pos < len(rest); k++ {
		end := lineEnd(rest, pos)
		if k < len(run) {
			if run[k] != string(rest[pos:end]) {
				break
			}
		} else {
			lagEnd := lineEnd(rest, lag)
			if !bytes.Equal(rest[lag:lagEnd], rest[pos:end]) {
				break
			}
			lag = lagEnd
		}
		pos = end
	}
	return k
}

// lineEnd returns the end of the line of b that starts at i, terminator
// included.
func lineEnd(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(b)
}

// equalPairs counts the pairs (i, j) with a[i] == b[j]: all of them, and
// those of lines that difflib's autojunk would not call popular in b.
func equalPairs(a, b []string) (all, unpopular int) {
	inB := make(map[string]int, len(b))
	for _, l := range b {
		inB[l]++
	}
	popular := len(b) + 1 // autojunk: only from 200 lines, over 1% + 1
	if len(b) >= 200 {
		popular = len(b)/100 + 2
	}
	for _, l := range a {
		n := inB[l]
		all += n
		if n < popular {
			unpopular += n
		}
	}
	return all, unpopular
}

// fill marks every line of b changed.
func fill(b []bool) {
	for i := range b {
		b[i] = true
	}
}

// slide moves each run of changed lines of x (changed[i] for x[i]) to the
// place GNU diff puts it when the choice is free, so that the hunks read
// the same as theirs: a run can move down one line when the line after it
// equals its first line (and up when the line before equals its last), as
// the unchanged lines keep the same contents in the same order. A run goes
// as far down as it can, merging with the runs it meets, then back up to
// the lowest place where it faces a run of changes of the other file y
// (otherChanged), so that the two read as one replacement.
func slide(x []string, changed, otherChanged []bool) {
	// unchangedY[k] is the index in y of its k-th unchanged line, paired
	// with the k-th unchanged line of x. A run of x preceded by u unchanged
	// lines faces the changed lines of y between unchangedY[u-1] and
	// unchangedY[u].
	var unchangedY []int
	for j, c := range otherChanged {
		if !c {
			unchangedY = append(unchangedY, j)
		}
	}
	facesChange := func(u int) bool {
		lo, hi := 0, len(otherChanged)
		if u > 0 {
			lo = unchangedY[u-1] + 1
		}
		if u < len(unchangedY) {
			hi = unchangedY[u]
		}
		return hi > lo
	}

	n := len(x)
	u := 0 // unchanged lines of x before i
	for i := 0; i < n; {
		if !changed[i] {
			u++
			i++
			continue
		}
		s, e := i, i
		for e < n && changed[e] {
			e++
		}
		for {
			length := e - s
			for s > 0 && x[s-1] == x[e-1] {
				s, e, u = s-1, e-1, u-1
				changed[s], changed[e] = true, false
				for s > 0 && changed[s-1] {
					s--
				}
			}
			facing := -1
			if facesChange(u) {
				facing = e
			}
			for e < n && x[s] == x[e] {
				changed[s], changed[e] = false, true
				s, e, u = s+1, e+1, u+1
				for e < n && changed[e] {
					e++
				}
				if facesChange(u) {
					facing = e
				}
			}
			// No run was merged in this pass: each slide is undoable.
			if e-s == length {
				for facing >= 0 && e > facing {
					s, e, u = s-1, e-1, u-1
					changed[s], changed[e] = true, false
				}
				break
			}
		}
		i = e
	}
}

// changes turns the changed lines of a and b back into changes: unchanged
// lines pair up in order, and each stretch between two pairs is a change.
func changes(changedA, changedB []bool) []change {
	var cs []change
	i, j := 0, 0
	for i < len(changedA) || j < len(changedB) {
		if i < len(changedA) && j < len(changedB) && !changedA[i] && !changedB[j] {
			i, j = i+1, j+1
			continue
		}
		c := change{a0: i, b0: j}
		for i < len(changedA) && changedA[i] {
			i++
		}
		for j < len(changedB) && changedB[j] {
			j++
		}
		if i == c.a0 && j == c.b0 {
			// Unpaired unchanged lines: cannot happen, as sliding keeps
			// their number equal; end with one change rather than loop.
			i, j = len(changedA), len(changedB)
		}
		c.a1, c.b1 = i, j
		cs = append(cs, c)
	}
	return cs
}

// writeHunks prints the hunks of s with ctx lines of context. As in GNU
// diff, two changes share a hunk when at most 2*ctx lines lie between them.
func (s *script) writeHunks(w *boundedWriter, ctx int) {
	cs := s.changes
	for i := 0; i < len(cs) && !w.full(); {
		j := i
		for j+1 < len(cs) && cs[j+1].a0-cs[j].a1 <= 2*ctx {
			j++
		}
		// Equal runs have the same length on both sides, so the context
		// before the first change and after the last one line up.
		first, last := cs[i], cs[j]
		a0 := max(first.a0-ctx, 0)
		b0 := first.b0 - (first.a0 - a0)
		a1 := min(last.a1+ctx, len(s.a))
		b1 := last.b1 + (a1 - last.a1)

		w.write("@@ -" + hunkRange(s.base+a0, a1-a0) + " +" + hunkRange(s.base+b0, b1-b0) + " @@\n")
		pos := a0
		for _, c := range cs[i : j+1] {
			writeLines(w, " ", s.a[pos:c.a0])
			writeLines(w, "-", s.a[c.a0:c.a1])
			writeLines(w, "+", s.b[c.b0:c.b1])
			pos = c.a1
		}
		writeLines(w, " ", s.a[pos:a1])
		i = j + 1
	}
}

// hunkRange formats a range of a hunk header as GNU diff does: "l,n" with
// l 1-based, "l" alone when n is 1, and for an empty range the number of
// the line before it (0 at the start of the file), as patch expects.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// writeLines prints lines, each after mark. A line without a terminator can
// only be the last of its file; diff then says so on a line of its own.
func writeLines(w *boundedWriter, mark string, lines []string) {
	for _, l := range lines {
		if w.full() {
			return
		}
		w.write(mark)
		w.write(l)
		if !strings.HasSuffix(l, "\n") {
			w.write("\n\\ No newline at end of file\n")
		}
	}
}

// splitLines splits s after each '\n', keeping it; a last line without
// one is kept as is. Unlike difflib.SplitLines, it adds no empty line
// after a final '\n' and keeps a missing final newline visible. The lines
// share s's memory.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		lines = append(lines, s[:i])
		s = s[i:]
	}
	return lines
}

// isLineStart reports whether a line of b starts at offset i.
func isLineStart(b []byte, i int) bool { return i == 0 || b[i-1] == '\n' }

// linesBack returns the start of the line up to n lines before offset i (a
// line start) in b, and how many lines it went back.
func linesBack(b []byte, i, n int) (start, lines int) {
	for ; lines < n && i > 0; lines++ {
		i = bytes.LastIndexByte(b[:i-1], '\n') + 1
	}
	return i, lines
}

// linesForward returns the end of the line up to n lines after offset i (a
// line start) in b, and how many lines it went forward.
func linesForward(b []byte, i, n int) (end, lines int) {
	for ; lines < n && i < len(b); lines++ {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			j = len(b) - i - 1
		}
		i += j + 1
	}
	return i, lines
}

// compareChunk is how many bytes commonPrefix and commonSuffix compare at
// once with bytes.Equal, which is vectorized, before the byte loop.
const compareChunk = 256

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+compareChunk <= n && bytes.Equal(a[i:i+compareChunk], b[i:i+compareChunk]) {
		i += compareChunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+compareChunk <= n && bytes.Equal(a[len(a)-i-compareChunk:len(a)-i], b[len(b)-i-compareChunk:len(b)-i]) {
		i += compareChunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// label is prefix+name for a file header, in double quotes with C escapes
// when name holds a control character, '"' or '\\', as git writes such
// names, so that a newline in a name cannot forge a line of the diff. An
// absolute name loses its leading slashes, and runs of slashes count as
// one, so the header reads a/tmp/x, never a//tmp/x.
func label(prefix, name string) string {
	name = strings.TrimLeft(name, "/")
	for strings.Contains(name, "//") {
		name = strings.ReplaceAll(name, "//", "/")
	}
	quote := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			quote = true
			break
		}
	}
	if !quote {
		return prefix + name
	}
	var b strings.Builder
	b.WriteString(`"` + prefix)
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// boundedWriter collects the diff text up to limit bytes (none if <= 0).
// It keeps one byte past the limit, to know whether the text was cut and
// whether the cut falls on a rune boundary, and drops everything after, so
// a huge diff costs no more memory than its limit.
type boundedWriter struct {
	b     strings.Builder
	limit int
	over  bool
}

func (w *boundedWriter) full() bool { return w.over }

func (w *boundedWriter) write(s string) {
	if w.over {
		return
	}
	if w.limit > 0 && w.b.Len()+len(s) > w.limit {
		s = s[:w.limit+1-w.b.Len()]
		w.over = true
	}
	w.b.WriteString(s)
}

// text returns the text written, cut if it went past the limit: after the
// last '\n' within the limit or, when even the first line is longer, at
// the last rune boundary within it.
func (w *boundedWriter) text() (string, bool) {
	t := w.b.String()
	if !w.over {
		return t, false
	}
	if i := strings.LastIndexByte(t[:w.limit], '\n'); i >= 0 {
		return t[:i+1], true
	}
	i := w.limit
	for k := 0; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(t[i]); k++ {
		i--
	}
	return t[:i], true
}
