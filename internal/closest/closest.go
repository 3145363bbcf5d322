// Package closest finds where text that did not match comes closest in a
// file, and says in words what differs, for FS_EDIT_NO_MATCH's detail. It
// is pure: no files, and nothing it finds is ever applied.
package closest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/text"
)

// Region is the region of a file that nearly matches an edit's old text,
// reported with FS_EDIT_NO_MATCH so a model can fix its call in one step
// without reading the file again. It is never applied.
type Region struct {
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// Differences says what differs, in words ("indentation: the file
	// uses tabs, old uses spaces").
	Differences []string `json:"differences"`
	// Text is the file's text of the region, bounded, to copy into old.
	Text string `json:"text"`
	// Partial says only the first MatchedLines lines of old were found;
	// the line after them differs.
	Partial      bool `json:"partial,omitempty"`
	MatchedLines int  `json:"matched_lines,omitempty"`

	// LiteralEscapes says old came close only once its escape sequences
	// were read as the characters they stand for.
	LiteralEscapes bool `json:"-"`
}

// Bounds of the diagnosis: it is a courtesy and must stay cheap.
const (
	closestMaxFile  = 16 << 20
	closestMaxText  = 2048
	closestMaxLines = 20
	// closestMaxEscapeNotes bounds the kinds of escape named.
	closestMaxEscapeNotes = 4
)

// normalizers erase, cumulatively, the differences models make most:
// trailing white space, indentation (tabs vs spaces, depth), curly quotes,
// and white space inside a line. The first level at which old is found
// names what differs.
var normalizers = []func(string) string{
	func(s string) string { return strings.TrimRight(s, " \t") },
	func(s string) string { return strings.TrimSpace(s) },
	func(s string) string { return straightQuotes(strings.TrimSpace(s)) },
	func(s string) string { return collapse(straightQuotes(s)) },
}

var curly = strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`)

func straightQuotes(s string) string { return curly.Replace(s) }

// splitForMatch splits text into lines without their terminators.
func splitForMatch(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Find looks for the region of content that matches old once the
// differences models make most are erased; failing that, for the longest
// run of old's first lines. It returns nil when nothing is close.
//
// An old that holds escape sequences (\t, \n, \", \\, \u00e9: text
// copied out of a JSON string) where the file has the characters they
// stand for is recognised: the region is found with the escapes read, and
// the differences say which escapes old holds.
func Find(content []byte, old string) *Region {
	if len(content) > closestMaxFile {
		return nil
	}
	file := splitForMatch(string(content))
	if len(file) > 1 && file[len(file)-1] == "" {
		file = file[:len(file)-1] // the file ends with a newline
	}
	want := splitWant(old)
	if c := closestNormalized(content, file, want, old); c != nil {
		if len(c.Differences) == 0 {
			c.Differences = []string{"white space"}
		}
		return c
	}
	c := longestPrefix(file, want)
	unescaped, notes := unescapeLiteral(old)
	if len(notes) == 0 {
		return c
	}
	wantU := splitWant(unescaped)
	if cu := closestNormalized(content, file, wantU, unescaped); cu != nil {
		cu.Differences = append(notes, cu.Differences...)
		cu.LiteralEscapes = true
		return cu
	}
	if cu := longestPrefix(file, wantU); cu != nil && (c == nil || cu.MatchedLines >= c.MatchedLines) {
		cu.Differences = append(notes, cu.Differences...)
		cu.LiteralEscapes = true
		return cu
	}
	return c
}

// splitWant splits old into lines as Find compares them.
func splitWant(old string) []string {
	want := splitForMatch(old)
	if len(want) > 1 && want[len(want)-1] == "" {
		want = want[:len(want)-1] // old ended with a newline
	}
	return want
}

// closestNormalized finds the region of the file that matches want at the
// first normalization that finds one, or nil. An exact match has no
// differences.
func closestNormalized(content []byte, file, want []string, old string) *Region {
	for _, norm := range normalizers {
		if start, ok := findNormalized(file, want, norm); ok {
			region := file[start : start+len(want)]
			return &Region{
				StartLine:   start + 1,
				EndLine:     start + len(want),
				Differences: differences(content, region, want, old),
				Text:        boundedText(region),
			}
		}
	}
	return nil
}

// jsonEscape is the escape sequence unescapeLiteral reads for the
// letter c after the backslash: what it stands for, how a note names
// that, and whether c makes one. A switch, not a map a process would
// build at its start.
func jsonEscape(c byte) (char, name string, ok bool) {
	switch c {
	case 't':
		return "\t", "a tab", true
	case 'n':
		return "\n", "a line break", true
	case 'r':
		return "\r", "a carriage return", true
	case '"':
		return `"`, `"`, true
	case '\'':
		return "'", "'", true
	case '/':
		return "/", "/", true
	case '\\':
		return `\`, "a single backslash", true
	}
	return "", "", false
}

// unescapeLiteral reads the escape sequences of a JSON string in s (\t,
// \n, \r, \", \\, \/, \uXXXX with surrogate pairs) and \', and
// returns the text they stand for, with one note per kind of escape
// found, in the order first met. Any other backslash stays as it is. No
// notes: s holds no such escape.
func unescapeLiteral(s string) (string, []string) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var notes []string
	noted := map[string]bool{}
	note := func(seq, what string) {
		if !noted[seq] && len(notes) < closestMaxEscapeNotes {
			noted[seq] = true
			notes = append(notes, "old holds the literal escape "+seq+" where the file has "+what)
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if char, name, ok := jsonEscape(s[i+1]); ok {
			b.WriteString(char)
			note(s[i:i+2], name)
			i++
			continue
		}
		if r, n := unicodeEscape(s[i:]); n > 0 {
			b.WriteRune(r)
			note(s[i:i+n], string(r))
			i += n - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), notes
}

// unicodeEscape reads a \uXXXX escape at the start of s, or a surrogate
// pair of two, and returns the rune and the bytes it took; 0 bytes when s
// starts with none.
func unicodeEscape(s string) (rune, int) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(s[6:]); ok {
			if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
				return p, 12
			}
		}
		return 0, 0
	}
	return r, 6
}

// findNormalized finds the first window of file whose lines match want
// under norm. old may begin and end inside a line, so its first line need
// only end the file's line and its last line only begin it.
func findNormalized(file, want []string, norm func(string) string) (int, bool) {
	k := len(want)
	nw := make([]string, k)
	for i, w := range want {
		nw[i] = norm(w)
	}
	if k == 1 && nw[0] == "" {
		return 0, false
	}
	for i := 0; i+k <= len(file); i++ {
		if lineMatches(norm(file[i]), nw, 0) && runMatches(file[i+1:i+k], nw, 1, norm) == k-1 {
			return i, true
		}
	}
	return 0, false
}

// lineMatches compares file line f with old's line j (both normalized).
func lineMatches(f string, nw []string, j int) bool {
	k := len(nw)
	switch {
	case k == 1:
		return strings.Contains(f, nw[0])
	case j == 0:
		return strings.HasSuffix(f, nw[0])
	case j == k-1:
		return strings.HasPrefix(f, nw[j])
	}
	return f == nw[j]
}

// runMatches counts how many of lines match old's lines from j on.
func runMatches(lines, nw []string, j int, norm func(string) string) int {
	n := 0
	for ; n < len(lines) && j+n < len(nw); n++ {
		if !lineMatches(norm(lines[n]), nw, j+n) {
			break
		}
	}
	return n
}

// longestPrefix finds where most of old's first lines match, at the
// loosest normalization, and reports the line after them as the one that
// differs.
func longestPrefix(file, want []string) *Region {
	if len(want) < 2 {
		return nil
	}
	norm := normalizers[len(normalizers)-1]
	nw := make([]string, len(want))
	for i, w := range want {
		nw[i] = norm(w)
	}
	best, bestLen := -1, 0
	for i := range file {
		if !lineMatches(norm(file[i]), nw, 0) {
			continue
		}
		n := 1 + runMatches(file[i+1:], nw, 1, norm)
		if n > bestLen {
			best, bestLen = i, n
		}
	}
	if best < 0 || nw[0] == "" {
		return nil
	}
	end := min(best+bestLen+1, len(file))
	c := &Region{
		StartLine:    best + 1,
		EndLine:      end,
		Partial:      true,
		MatchedLines: bestLen,
		Text:         boundedText(file[best:end]),
	}
	if best+bestLen < len(file) {
		c.Differences = []string{fmt.Sprintf("line %d of the file differs from line %d of old: file has %q, old has %q",
			best+bestLen+1, bestLen+1, clip(file[best+bestLen]), clip(want[bestLen]))}
	} else {
		c.Differences = []string{fmt.Sprintf("the file ends after line %d; old goes on", len(file))}
	}
	return c
}

// differences names what separates the file's region from old; none when
// they are equal.
func differences(content []byte, region, want []string, old string) []string {
	var out []string
	fileCRLF := strings.Contains(string(content), "\r\n")
	if strings.Contains(old, "\r\n") && !fileCRLF {
		out = append(out, "line endings: old has CRLF, the file LF")
	}
	var trailing, indent, quotes, inner bool
	var fileTabs, oldTabs bool
	for i := range want {
		f, w := region[i], want[i]
		// old may start inside its first line and end inside its last:
		// there, white space at the edge of old says nothing unless old
		// has some.
		fragStart := i == 0 && leading(w) == ""
		fragEnd := i == len(want)-1 && strings.TrimRight(w, " \t") == w
		if !fragEnd && trailingDiffers(f, w) {
			trailing = true
		}
		if fi, wi := leading(f), leading(w); fi != wi && !fragStart {
			indent = true
			fileTabs = fileTabs || strings.Contains(fi, "\t")
			oldTabs = oldTabs || strings.Contains(wi, "\t")
		}
		tf, tw := strings.TrimSpace(f), strings.TrimSpace(w)
		switch {
		case strings.Contains(tf, tw):
		case strings.Contains(straightQuotes(tf), straightQuotes(tw)):
			quotes = true
		case strings.Contains(collapse(tf), collapse(tw)):
			inner = true
		default:
			quotes, inner = true, true
		}
	}
	if trailing {
		out = append(out, "trailing white space")
	}
	switch {
	case indent && fileTabs && !oldTabs:
		out = append(out, "indentation: the file uses tabs, old uses spaces")
	case indent && oldTabs && !fileTabs:
		out = append(out, "indentation: the file uses spaces, old uses tabs")
	case indent:
		out = append(out, "indentation depth")
	}
	if quotes {
		out = append(out, "quotes: curly in one, straight in the other")
	}
	if inner {
		out = append(out, "white space inside lines")
	}
	return out
}

// collapse writes every run of white space as one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func trailingDiffers(f, w string) bool {
	return f[len(strings.TrimRight(f, " \t")):] != w[len(strings.TrimRight(w, " \t")):]
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

func boundedText(lines []string) string {
	if len(lines) > closestMaxLines {
		lines = lines[:closestMaxLines]
	}
	s := strings.Join(lines, "\n")
	if len(s) > closestMaxText {
		s = string(text.TrimToRune([]byte(s[:closestMaxText])))
	}
	return s
}

func clip(s string) string {
	if len(s) > 80 {
		return string(text.TrimToRune([]byte(s[:80]))) + "…"
	}
	return s
}
