// Package patch parses the two patch formats models write, unified diffs
// as git writes them and Codex's apply_patch format, and places their
// hunks in a file's text by each format's own rules (docs/design.md §5,
// patch). It is pure: it reads bytes and returns text, and never touches
// a file; internal/fsops stages and commits what it computes.
package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Format is the format a patch was written in.
type Format string

// The formats Parse accepts.
const (
	// Unified is a unified diff as `git diff` (or `diff -u`) writes it.
	Unified Format = "unified"
	// ApplyPatch is Codex's format: *** Begin Patch … *** End Patch.
	ApplyPatch Format = "apply_patch"
)

// Kind is what a patch does to a file.
type Kind string

// The kinds of file change.
const (
	Add    Kind = "add"
	Delete Kind = "delete"
	Update Kind = "update"
)

// Patch is a parsed patch: its files in the order written.
type Patch struct {
	Format Format
	Files  []*File
}

// File is one file's change. Path is the file changed (the new file for
// Add); MoveTo, when set, is where an update moves it.
type File struct {
	Kind   Kind
	Path   string
	MoveTo string
	Hunks  []Hunk
	// Mode is the permission bits a unified diff gives the file ("new
	// file mode", "new mode"), 0 when it says none.
	Mode uint32
	// Line is the patch's line where the file's section starts, for
	// messages.
	Line int
}

// Hunk is one hunk: its lines, and where its format says it goes.
type Hunk struct {
	// OldStart, OldLines, NewStart and NewLines are a unified hunk's
	// header, @@ -OldStart,OldLines +NewStart,NewLines @@.
	OldStart, OldLines, NewStart, NewLines int
	// Context is an apply_patch hunk's @@ text, the line to seek first;
	// HasContext says there was one.
	Context    string
	HasContext bool
	// EndOfFile anchors an apply_patch hunk at the end of the file.
	EndOfFile bool
	Lines     []Line
	// Line is the patch's line of the hunk's header, for messages.
	Line int
}

// Line is one line of a hunk: Op is ' ' (context), '-' (removed) or '+'
// (added); Text is the line without its "\n" (a CRLF file's diff keeps
// its "\r"). NoEOL says "\ No newline at end of file" followed it.
type Line struct {
	Op    byte
	Text  string
	NoEOL bool
}

// SyntaxError is a patch that cannot be parsed: the line and what is
// wrong with it.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func syntaxErr(line int, format string, args ...any) error {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a patch in either format: one whose first non-blank line is
// "*** Begin Patch" is apply_patch, anything else a unified diff. A patch
// that changes no file is an error.
func Parse(data []byte) (*Patch, error) {
	lines := splitLines(data)
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.TrimSpace(l) == beginPatch {
			return parseApplyPatch(lines)
		}
		break
	}
	return parseUnified(lines)
}

// splitLines splits data at "\n", dropping the empty piece after a final
// newline. A "\r" before the "\n" stays: it may be a CRLF file's.
//
// A patch whose every line ends in "\r\n" was itself written with CRLF (an
// editor, a Windows clipboard): its "\r"s are the patch's, not its files',
// and are dropped, so its lines take each file's own ending.
func splitLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if !strings.HasSuffix(l, "\r") {
			return lines
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

// parseApplyPatch reads Codex's grammar:
//
//	Patch  := "*** Begin Patch" { FileOp } "*** End Patch"
//	FileOp := "*** Add File: " path { "+" line } | "*** Delete File: " path
//	        | "*** Update File: " path [ "*** Move to: " path ] { Hunk }
//	Hunk   := "@@" [ " " context ] { (" " | "-" | "+") line } [ "*** End of File" ]
//
// An update's first hunk may leave out its "@@"; an empty line in a hunk
// is empty context; markers are trimmed of white space, as Codex does.
func parseApplyPatch(lines []string) (*Patch, error) {
	p := &Patch{Format: ApplyPatch}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	i++ // *** Begin Patch
	ended := false
	for i < len(lines) && !ended {
		raw := strings.TrimSuffix(lines[i], "\r")
		marker := strings.TrimSpace(raw)
		n := i + 1
		switch {
		case marker == endPatch:
			ended = true
			i++
		case strings.HasPrefix(marker, addFile):
			f := &File{Kind: Add, Path: strings.TrimSpace(marker[len(addFile):]), Line: n}
			i++
			h := Hunk{Line: n}
			for i < len(lines) && strings.HasPrefix(lines[i], "+") {
				h.Lines = append(h.Lines, Line{Op: '+', Text: lines[i][1:]})
				i++
			}
			if len(h.Lines) > 0 {
				f.Hunks = []Hunk{h}
			}
			p.Files = append(p.Files, f)
		case strings.HasPrefix(marker, deleteFile):
			p.Files = append(p.Files, &File{Kind: Delete, Path: strings.TrimSpace(marker[len(deleteFile):]), Line: n})
			i++
		case strings.HasPrefix(marker, updateFile):
			f := &File{Kind: Update, Path: strings.TrimSpace(marker[len(updateFile):]), Line: n}
			i++
			if i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), moveTo) {
				f.MoveTo = strings.TrimSpace(strings.TrimSpace(lines[i])[len(moveTo):])
				i++
			}
			var err error
			if i, err = parseApplyHunks(lines, i, f); err != nil {
				return nil, err
			}
			if len(f.Hunks) == 0 && f.MoveTo == "" {
				return nil, syntaxErr(n, "update of %s has no hunk", f.Path)
			}
			p.Files = append(p.Files, f)
		case marker == "":
			i++
		default:
			return nil, syntaxErr(n, "expected *** Add File:, *** Delete File:, *** Update File: or *** End Patch, got %q", clip(raw))
		}
	}
	if !ended {
		return nil, syntaxErr(len(lines), "the patch does not end with %q", endPatch)
	}
	for _, f := range p.Files {
		if f.Path == "" {
			return nil, syntaxErr(f.Line, "a file operation names no path")
		}
	}
	if len(p.Files) == 0 {
		return nil, syntaxErr(1, "the patch changes no file")
	}
	return p, nil
}

// parseApplyHunks reads an update's hunks from lines[i:], up to the next
// "***" marker, and returns where it stopped.
func parseApplyHunks(lines []string, i int, f *File) (int, error) {
	var h *Hunk
	for i < len(lines) {
		l := lines[i]
		marker := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		switch {
		case marker == endOfFile:
			if h == nil {
				return i, syntaxErr(i+1, "%s outside a hunk", endOfFile)
			}
			h.EndOfFile = true
			h = nil
			i++
			continue
		case strings.HasPrefix(l, "***"):
			return i, nil
		case strings.HasPrefix(l, "@@"):
			f.Hunks = append(f.Hunks, Hunk{Line: i + 1})
			h = &f.Hunks[len(f.Hunks)-1]
			// "@@" alone, or with only white space after it, seeks
			// nothing.
			if ctx := strings.TrimSuffix(l, "\r"); strings.TrimSpace(ctx[2:]) != "" {
				h.Context, h.HasContext = strings.TrimPrefix(ctx[2:], " "), true
			}
			i++
			continue
		}
		if h == nil {
			if len(f.Hunks) > 0 {
				return i, syntaxErr(i+1, "a line after *** End of File must start a hunk with @@, got %q", clip(l))
			}
			// The first hunk may leave out its @@ line.
			f.Hunks = append(f.Hunks, Hunk{Line: i + 1})
			h = &f.Hunks[0]
		}
		switch {
		case l == "" || l == "\r":
			h.Lines = append(h.Lines, Line{Op: ' ', Text: ""})
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			h.Lines = append(h.Lines, Line{Op: l[0], Text: l[1:]})
		default:
			return i, syntaxErr(i+1, "a hunk line starts with ' ', '-' or '+', got %q", clip(l))
		}
		i++
	}
	return i, nil
}

// parseUnified reads a unified diff: git's "diff --git" sections with
// their extended headers, or plain "--- "/"+++ " pairs. Text before the
// first file (a commit message, git show's header) is skipped.
func parseUnified(lines []string) (*Patch, error) {
	p := &Patch{Format: Unified}
	var f *File
	var renameFrom, renameTo string
	gitSection := false
	flush := func() error {
		if f == nil {
			return nil
		}
		if renameFrom != "" || renameTo != "" {
			if renameFrom == "" || renameTo == "" {
				return syntaxErr(f.Line, "a rename needs both rename from and rename to")
			}
			f.Path, f.MoveTo = renameFrom, renameTo
			if f.Path == f.MoveTo {
				f.MoveTo = ""
			}
		}
		if f.Path == "" {
			return syntaxErr(f.Line, "cannot tell which file this section changes")
		}
		if f.Kind == Update && len(f.Hunks) == 0 && f.MoveTo == "" && f.Mode == 0 {
			return syntaxErr(f.Line, "the section of %s changes nothing", f.Path)
		}
		p.Files = append(p.Files, f)
		f, renameFrom, renameTo = nil, "", ""
		return nil
	}
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\r")
		n := i + 1
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := flush(); err != nil {
				return nil, err
			}
			f, gitSection = &File{Kind: Update, Line: n}, true
			f.Path = gitHeaderPath(l[len("diff --git "):])
		case f != nil && gitSection && len(f.Hunks) == 0 && isGitExtended(l):
			if err := gitExtended(f, l, n, &renameFrom, &renameTo); err != nil {
				return nil, err
			}
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if f == nil || len(f.Hunks) > 0 || !gitSection {
				if err := flush(); err != nil {
					return nil, err
				}
				f, gitSection = &File{Kind: Update, Line: n}, false
			}
			oldName := diffName(l[4:])
			newName := diffName(strings.TrimSuffix(lines[i+1], "\r")[4:])
			i++
			switch {
			case oldName == "/dev/null" && newName == "/dev/null":
				return nil, syntaxErr(n, "both sides are /dev/null")
			case oldName == "/dev/null":
				f.Kind, f.Path = Add, stripPrefix(newName, "b/", gitSection)
			case newName == "/dev/null":
				f.Kind, f.Path = Delete, stripPrefix(oldName, "a/", gitSection)
			default:
				from, to := stripPrefix(oldName, "a/", gitSection), stripPrefix(newName, "b/", gitSection)
				if !gitSection && strings.HasPrefix(oldName, "a/") && strings.HasPrefix(newName, "b/") {
					from, to = oldName[2:], newName[2:]
				}
				f.Path = from
				if from != to && renameTo == "" {
					renameFrom, renameTo = from, to
				}
			}
		case strings.HasPrefix(l, "@@ "):
			if f == nil {
				return nil, syntaxErr(n, "a hunk before any file header (--- and +++)")
			}
			h, next, err := parseUnifiedHunk(lines, i)
			if err != nil {
				return nil, err
			}
			f.Hunks = append(f.Hunks, h)
			i = next - 1
		case strings.HasPrefix(l, "GIT binary patch"), strings.HasPrefix(l, "Binary files "):
			return nil, syntaxErr(n, "binary patches are not supported: write the file whole")
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, syntaxErr(1, "no file in the patch: want a unified diff (--- a/FILE, +++ b/FILE, @@ hunks) or *** Begin Patch")
	}
	return p, nil
}

func isGitExtended(l string) bool {
	for _, p := range []string{"old mode ", "new mode ", "deleted file mode ", "new file mode ", "similarity index ",
		"dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "index "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// gitExtended reads one of git's extended header lines into f.
func gitExtended(f *File, l string, n int, renameFrom, renameTo *string) error {
	key, val, _ := strings.Cut(l, " ")
	switch {
	case strings.HasPrefix(l, "new file mode "):
		f.Kind = Add
		return parseMode(f, strings.TrimPrefix(l, "new file mode "), n)
	case strings.HasPrefix(l, "deleted file mode "):
		f.Kind = Delete
	case strings.HasPrefix(l, "new mode "):
		return parseMode(f, strings.TrimPrefix(l, "new mode "), n)
	case strings.HasPrefix(l, "rename from "):
		*renameFrom = unquote(strings.TrimPrefix(l, "rename from "))
	case strings.HasPrefix(l, "rename to "):
		*renameTo = unquote(strings.TrimPrefix(l, "rename to "))
	case key == "copy":
		return syntaxErr(n, "copies are not supported: add the new file instead (%s)", val)
	}
	return nil
}

func parseMode(f *File, s string, n int) error {
	m, err := strconv.ParseUint(strings.TrimSpace(s), 8, 32)
	if err != nil {
		return syntaxErr(n, "bad file mode %q", s)
	}
	switch m & 0o170000 {
	case 0o100000:
		f.Mode = uint32(m & 0o777)
	case 0o120000, 0o160000:
		return syntaxErr(n, "symlinks and submodules are not supported by patch (mode %o)", m)
	}
	return nil
}

// gitHeaderPath is the path of "diff --git a/P b/P": the new side, when
// both sides name the same path (a rename's two names come from its own
// headers).
func gitHeaderPath(s string) string {
	if strings.HasPrefix(s, `"`) {
		return "" // quoted: the ---/+++ or rename lines name it
	}
	half := (len(s) - 1) / 2
	if len(s)%2 == 1 && s[half] == ' ' && strings.HasPrefix(s, "a/") && strings.HasPrefix(s[half+1:], "b/") && s[2:half] == s[half+3:] {
		return s[2:half]
	}
	return ""
}

// diffName is the name of a ---/+++ line: unquoted, and without the
// timestamp diff -u puts after a tab.
func diffName(s string) string {
	if before, _, ok := strings.Cut(s, "\t"); ok && !strings.HasPrefix(s, `"`) {
		s = before
	}
	return unquote(strings.TrimRight(s, " "))
}

func stripPrefix(name, prefix string, git bool) string {
	if git {
		return strings.TrimPrefix(name, prefix)
	}
	return name
}

// unquote reads git's C-style quoted name ("a/x\tb"); an unquoted one is
// itself.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// parseUnifiedHunk reads the hunk whose header is lines[i], taking as many
// lines as the header counts, and returns it and the index after it.
func parseUnifiedHunk(lines []string, i int) (Hunk, int, error) {
	header := strings.TrimSuffix(lines[i], "\r")
	h := Hunk{Line: i + 1}
	rest, ok := strings.CutPrefix(header, "@@ -")
	var ranges string
	if ok {
		ranges, _, ok = strings.Cut(rest, " @@")
	}
	oldR, newR, ok2 := strings.Cut(ranges, " +")
	if !ok || !ok2 {
		return h, 0, syntaxErr(i+1, "bad hunk header %q: want @@ -OLD,COUNT +NEW,COUNT @@", clip(header))
	}
	var err error
	if h.OldStart, h.OldLines, err = parseRange(oldR); err == nil {
		h.NewStart, h.NewLines, err = parseRange(newR)
	}
	if err != nil {
		return h, 0, syntaxErr(i+1, "bad hunk header %q: %v", clip(header), err)
	}
	oldLeft, newLeft := h.OldLines, h.NewLines
	j := i + 1
	for ; j < len(lines) && (oldLeft > 0 || newLeft > 0); j++ {
		l := lines[j]
		op := byte(' ')
		text := ""
		switch {
		case l == "" || l == "\r":
			// An empty context line whose space an editor took away, as
			// git reads it.
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			op, text = l[0], l[1:]
		case l[0] == '\\':
			if len(h.Lines) == 0 {
				return h, 0, syntaxErr(j+1, "%q before any line", clip(l))
			}
			h.Lines[len(h.Lines)-1].NoEOL = true
			continue
		default:
			return h, 0, syntaxErr(j+1, "hunk at line %d ends early: it counts %d old and %d new lines, %d and %d are missing (a hunk line starts with ' ', '-' or '+', got %q)",
				i+1, h.OldLines, h.NewLines, oldLeft, newLeft, clip(l))
		}
		switch op {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, 0, syntaxErr(j+1, "hunk at line %d has more lines than its header counts (%d old, %d new)", i+1, h.OldLines, h.NewLines)
		}
		h.Lines = append(h.Lines, Line{Op: op, Text: text})
	}
	if oldLeft > 0 || newLeft > 0 {
		return h, 0, syntaxErr(i+1, "hunk ends early: it counts %d old and %d new lines, %d and %d are missing", h.OldLines, h.NewLines, oldLeft, newLeft)
	}
	if j < len(lines) && strings.HasPrefix(lines[j], `\`) && len(h.Lines) > 0 {
		h.Lines[len(h.Lines)-1].NoEOL = true
		j++
	}
	return h, j, nil
}

func parseRange(s string) (start, count int, err error) {
	a, b, has := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad line number %q", a)
	}
	count = 1
	if has {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, fmt.Errorf("bad line count %q", b)
		}
	}
	return start, count, nil
}

// clip bounds a line quoted in a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Old returns the hunk's old side: its context and removed lines.
func (h Hunk) Old() []Line { return h.side('-') }

// New returns the hunk's new side: its context and added lines.
func (h Hunk) New() []Line { return h.side('+') }

func (h Hunk) side(op byte) []Line {
	var out []Line
	for _, l := range h.Lines {
		if l.Op == ' ' || l.Op == op {
			out = append(out, l)
		}
	}
	return out
}

// OldText is the hunk's old side as text, one "\n" after each line, for
// the closest-region search of a hunk that cannot be placed.
func (h Hunk) OldText() string {
	var b bytes.Buffer
	for _, l := range h.Old() {
		b.WriteString(strings.TrimSuffix(l.Text, "\r"))
		b.WriteByte('\n')
	}
	return b.String()
}
