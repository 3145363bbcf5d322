package search

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// The default bounds of a search, so a search of a large tree never
// floods an agent's context.
const (
	// DefaultGrepLimit is the most matches grep shows.
	DefaultGrepLimit = 200
	// DefaultFindLimit is the most entries find shows.
	DefaultFindLimit = 1000
	// DefaultSearchMaxBytes is the most bytes of JSON the matches or
	// entries of one result may take.
	DefaultSearchMaxBytes = 64 << 10
	// DefaultMaxLineBytes is the longest line text a match shows; a
	// longer line is cut around the match.
	DefaultMaxLineBytes = 512
)

// grepBufSize is a search's first buffer; it doubles, up to
// grepMaxBufSize, for a line (with its context) longer than it. A file
// with a longer line is skipped as too large: memory stays bounded.
const (
	grepBufSize    = 256 << 10
	grepMaxBufSize = 16 << 20
)

// ellipsis marks where a line was cut.
const ellipsis = text.Ellipsis

// GrepOptions shape a search of file contents.
type GrepOptions struct {
	// Pattern is an RE2 regular expression (Go's regexp syntax), or a
	// literal string with Fixed. It matches within one line.
	Pattern string
	// Fixed takes Pattern as a literal string.
	Fixed bool
	// IgnoreCase matches letters of either case.
	IgnoreCase bool
	// Context is how many lines before and after each match to show.
	Context int
	// Files lists the files that match instead of the matches.
	Files bool
	// Count lists the files that match with how many lines match.
	Count bool
	// Limit is the most matches (with Files or Count, files) shown, 1 or
	// more, as every limit is (docs/design.md §5).
	Limit int
	// MaxBytes is the most bytes of JSON the shown matches may take.
	MaxBytes int
	// MaxLineBytes is the longest line text shown; longer lines are cut
	// around the match and marked with "…".
	MaxLineBytes int
	WalkOptions
	// bufSize and maxBufSize, above 0 in this package's tests only, are
	// a search's first and largest buffer instead of grepBufSize and
	// grepMaxBufSize, so a buffer boundary can fall anywhere.
	bufSize, maxBufSize int
}

// Match is one line that matches.
type Match struct {
	// Path names the file as the searched path was given, joined with
	// the file's path beneath it ("src/a.go").
	Path string `json:"path"`
	// Line is the line's number, from 1.
	Line int `json:"line"`
	// Column is the byte offset of the first match in the line, from 1.
	Column int `json:"column"`
	// Text is the line without its line break, cut around the match
	// (and marked "…") when longer than MaxLineBytes.
	Text string `json:"text"`
	// Before and After are the context lines (cut at MaxLineBytes).
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	// Cut says Text was cut.
	Cut bool `json:"cut,omitempty"`
}

// FileMatch is a file that matches, with --files or --count.
type FileMatch struct {
	Path string `json:"path"`
	// Count is how many lines match, with --count.
	Count int `json:"count,omitempty"`
}

// GrepResult is what a search found, sorted by path, then line.
type GrepResult struct {
	// Matches are the matching lines (absent with Files or Count).
	Matches []Match `json:"matches,omitzero"`
	// Files are the matching files (only with Files or Count).
	Files []FileMatch `json:"files,omitzero"`
	// Total counts every match (with Files or Count, file) found after
	// the cursor, shown or not: the search reads every file.
	Total int `json:"total"`
	// Truncated says the limit or the byte budget left some out.
	Truncated bool `json:"truncated"`
	// LeftOut counts those left out: Total less those shown.
	LeftOut int `json:"left_out,omitzero"`
	// Cursor continues the search after the last one shown (--after).
	Cursor        string  `json:"cursor,omitempty"`
	FilesSearched int     `json:"files_searched"`
	FilesSkipped  Skipped `json:"files_skipped"`
	// Hidden counts entries under deny_read, never opened.
	Hidden int `json:"hidden,omitempty"`
}

// matcher finds the first match in b: its start and end, or -1.
type matcher interface {
	find(b []byte) (int, int)
}

type literal []byte

func (l literal) find(b []byte) (int, int) {
	i := bytes.Index(b, l)
	if i < 0 {
		return -1, -1
	}
	return i, i + len(l)
}

type re struct{ *regexp.Regexp }

func (r re) find(b []byte) (int, int) {
	loc := r.FindIndex(b)
	if loc == nil {
		return -1, -1
	}
	return loc[0], loc[1]
}

// prefiltered is a regular expression every match of which holds lit: a
// line is looked at only where bytes.Index finds lit in it, and the
// expression runs on that line alone. That is what makes grep and rg fast.
type prefiltered struct {
	lit []byte
	re  *regexp.Regexp
}

func (p prefiltered) find(b []byte) (int, int) {
	for off := 0; off <= len(b); {
		i := bytes.Index(b[off:], p.lit)
		if i < 0 {
			return -1, -1
		}
		i += off
		ls := bytes.LastIndexByte(b[:i], '\n') + 1
		le := len(b)
		if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
			le = i + j
		}
		if loc := p.re.FindIndex(b[ls:le]); loc != nil {
			return ls + loc[0], ls + loc[1]
		}
		off = le + 1
	}
	return -1, -1
}

// requiredLiteral is the longest case-sensitive literal that every match
// of the parsed expression holds, found among the parts of a top-level
// concatenation; "" when there is none worth searching for.
func requiredLiteral(re *syntax.Regexp) string {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	best := ""
	if re.Op == syntax.OpConcat {
		for _, sub := range re.Sub {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && len(string(sub.Rune)) > len(best) {
				best = string(sub.Rune)
			}
		}
	}
	if len(best) < 3 || strings.ContainsRune(best, '\n') {
		return ""
	}
	return best
}

// compileMatcher turns the pattern into a matcher: bytes.Index for a
// literal (Fixed, or a regular expression with no special character),
// Go's regexp otherwise, in multi-line mode so "^" and "$" match at line
// boundaries, run only on the lines that hold a literal every match
// holds (prefiltered) or one of a set of literals (acMatcher, an
// alternation of literals).
func compileMatcher(opt GrepOptions) (matcher, error) {
	pat := opt.Pattern
	required := ""
	var multi *litSet
	if !opt.Fixed {
		parsed, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			e := fserr.Wrap(fserr.InvalidArgument, "grep: bad pattern: "+err.Error(), err)
			e.Hint = "RE2 syntax (Go's regexp); --fixed takes the pattern literally"
			return nil, e
		}
		if parsed.Op == syntax.OpLiteral && parsed.Flags&syntax.FoldCase == 0 {
			pat, opt.Fixed = string(parsed.Rune), true
		} else if parsed.Op == syntax.OpEmptyMatch {
			pat, opt.Fixed = "", true
		} else {
			multi = multiLiteral(parsed.Simplify(), opt.IgnoreCase)
			if multi == nil && !opt.IgnoreCase {
				required = requiredLiteral(parsed.Simplify())
			}
		}
	}
	if opt.Fixed && !opt.IgnoreCase {
		return literal(pat), nil
	}
	if opt.Fixed {
		pat = regexp.QuoteMeta(pat)
	}
	flags := "(?m)"
	if opt.IgnoreCase {
		flags = "(?mi)"
	}
	r, err := regexp.Compile(flags + pat)
	if err != nil {
		return nil, fserr.Wrap(fserr.InvalidArgument, "grep: bad pattern: "+err.Error(), err)
	}
	if required != "" {
		return prefiltered{lit: []byte(required), re: r}, nil
	}
	if multi != nil {
		a := newAutomaton
		if multi.exact {
			a = newExactAutomaton
		}
		if ac := a(multi.lits, multi.fold); ac != nil {
			return acMatcher{ac: ac, re: r}, nil
		}
	}
	return re{r}, nil
}

// Grep searches the files of each target: a folder is walked (see
// WalkOptions), a file is searched as it is. Each file is opened by
// handle after the fence has judged its name, checked on what was opened,
// and read in bounded chunks; binary files are skipped. Every file is
// searched even past the limit, so Total is exact.
func Grep(f *sandbox.Fence, targets []sandbox.Target, opt GrepOptions) (*GrepResult, error) {
	if opt.Limit < 1 || opt.MaxBytes < 1 || opt.MaxLineBytes < 1 {
		return nil, fserr.New(fserr.InvalidArgument, "grep: --limit, --max-bytes and --max-line-bytes must be 1 or more")
	}
	if opt.Context < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "grep: --context must be zero or more")
	}
	if opt.Files && opt.Count {
		return nil, fserr.New(fserr.InvalidArgument, "grep: --files and --count exclude each other")
	}
	m, err := compileMatcher(opt)
	if err != nil {
		return nil, err
	}
	w, err := newWalker(f, "grep", opt.WalkOptions)
	if err != nil {
		return nil, err
	}
	g := &grepper{w: w, opt: opt, res: &GrepResult{}}
	g.scan = scanner{opt: opt, m: m, full: &g.fullFlag}
	if opt.Files || opt.Count {
		g.res.Files = []FileMatch{}
	} else {
		g.res.Matches = []Match{}
	}
	g.start()
	for i, t := range targets {
		if w.resume(i) {
			continue
		}
		g.arg = i
		if err := g.target(t); err != nil {
			g.stop()
			return nil, err
		}
	}
	g.stop()
	g.res.FilesSkipped, g.res.Hidden = w.skip, w.hidden
	if g.res.Truncated {
		shown := len(g.res.Matches) + len(g.res.Files)
		g.res.LeftOut = g.res.Total - shown
		if shown > 0 {
			g.res.Cursor = g.last.String()
		}
	}
	return g.res, nil
}

// grepper is one search. The walk (in the calling goroutine) judges and
// opens each file in order; workers read and search the files, as many
// at a time as there are CPUs; their findings are taken in the order the
// files were opened, so parallel search never changes the output.
type grepper struct {
	w    *walker
	opt  GrepOptions
	scan scanner
	res  *GrepResult
	arg  int
	// used is the bytes of JSON the shown matches take.
	used int
	// full: the limit or the byte budget is reached; the rest is counted.
	full bool
	// fullFlag tells the workers that nothing more will be shown, so
	// they only count.
	fullFlag atomic.Bool
	// last is the last match (or file) shown.
	last cursor

	jobs    chan *fileJob
	pending []*fileJob // in the walk's order
	window  int
	workers sync.WaitGroup
}

// fileJob is one opened file to search, and what was found in it.
type fileJob struct {
	r            io.ReadCloser
	display, rel string
	minLine      int
	done         chan found
}

// found is what the search of one file found.
type found struct {
	// matches are the first matching lines, as many as could be shown,
	// and sizes the bytes of JSON each takes.
	matches []Match
	sizes   []int
	// count is how many lines match after minLine.
	count                        int
	binary, tooLarge, unreadable bool
}

// start starts the workers; with one CPU the files are searched in the
// walk's goroutine.
func (g *grepper) start() {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return
	}
	g.window = 8 * n
	g.jobs = make(chan *fileJob, n)
	for range n {
		g.workers.Add(1)
		go func() {
			defer g.workers.Done()
			s := g.scan // each worker has its own buffer
			for j := range g.jobs {
				j.done <- s.file(j.r, j.display, j.minLine)
				j.r.Close()
			}
		}()
	}
}

// stop takes the findings still pending and stops the workers.
func (g *grepper) stop() {
	for len(g.pending) > 0 {
		g.take()
	}
	if g.jobs != nil {
		close(g.jobs)
		g.workers.Wait()
		g.jobs = nil
	}
}

// search searches the opened file r, now or by a worker, and closes it.
func (g *grepper) search(r io.ReadCloser, display, rel string, minLine int) {
	if g.jobs == nil {
		f := g.scan.file(r, display, minLine)
		r.Close()
		g.apply(f, display, rel)
		return
	}
	j := &fileJob{r: r, display: display, rel: rel, minLine: minLine, done: make(chan found, 1)}
	g.jobs <- j
	g.pending = append(g.pending, j)
	if len(g.pending) >= g.window {
		g.take()
	}
}

// take applies the findings of the oldest pending file.
func (g *grepper) take() {
	j := g.pending[0]
	g.pending[0] = nil
	g.pending = g.pending[1:]
	g.apply(<-j.done, j.display, j.rel)
}

// apply counts and shows, in the walk's order, what one file held.
func (g *grepper) apply(f found, display, rel string) {
	switch {
	case f.binary:
		g.w.skip.Binary++
		return
	case f.unreadable:
		g.w.skip.Unreadable++
		return
	}
	g.res.FilesSearched++
	if f.tooLarge {
		g.w.skip.TooLarge++
	}
	if g.opt.Files || g.opt.Count {
		if f.count > 0 {
			g.res.Total++
			fm := FileMatch{Path: display}
			if g.opt.Count {
				fm.Count = f.count
			}
			g.keep(fm, jsonSize(fm), rel, 0)
		}
		return
	}
	g.res.Total += f.count
	for i, m := range f.matches {
		g.keep(m, f.sizes[i], rel, m.Line)
	}
	if f.count > len(f.matches) && !g.full {
		// The scanner built no more than could be shown: the rest of
		// this file's matches are past the limit or the byte budget.
		g.full, g.res.Truncated = true, true
		g.fullFlag.Store(true)
	}
}

// target searches one path given: a folder walked, or a file.
func (g *grepper) target(t sandbox.Target) error {
	d, err := g.w.f.OpenList("grep", t)
	if fserr.CodeOf(err) == fserr.NotDir {
		if g.w.cur != nil && g.w.cur.line == 0 {
			return nil // shown before the cursor
		}
		file, err := fsops.OpenForRead(g.w.f, "grep", t)
		if err != nil {
			return err
		}
		g.search(file, t.Given, "", g.w.minLine(""))
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	g.w.visit = func(d *sandbox.ListDir, e sandbox.DirEntry, rel string) error {
		switch e.Type {
		case sandbox.EntryDir:
			return nil
		case sandbox.EntrySymlink:
			g.w.skip.Symlink++
			return nil
		case sandbox.EntryOther:
			return nil // a FIFO, a socket, a device: nothing to search
		}
		h, err := d.OpenFile(e.Name)
		if err != nil {
			if fserr.CodeOf(err) == fserr.SandboxDenied {
				g.w.hidden++ // by identity or real path, decided on what was opened
			} else {
				g.w.skip.Unreadable++
			}
			return nil
		}
		g.search(h, displayPath(t.Given, rel), rel, g.w.minLine(rel))
		return nil
	}
	return g.w.walk(d, "", nil)
}

// scanner searches one file at a time in a buffer of its own.
type scanner struct {
	opt  GrepOptions
	m    matcher
	buf  []byte
	full *atomic.Bool
	// built is the bytes of JSON of the matches built for this file.
	built int
}

// file searches one opened file, named display in results, for the
// lines after minLine.
func (s *scanner) file(r io.Reader, display string, minLine int) (f found) {
	if s.buf == nil {
		s.buf = make([]byte, cmp.Or(s.opt.bufSize, grepBufSize))
	}
	s.built = 0
	ctx := s.opt.Context
	buf := s.buf
	n, from, lineAtFrom := 0, 0, 1
	eof, first, stop := false, true, false
	for !stop {
		for n < len(buf) && !eof {
			m, err := r.Read(buf[n:])
			n += m
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return found{unreadable: true}
			}
		}
		if first {
			first = false
			if text.IsBinary(buf[:min(n, text.SniffLen)]) {
				// Not UTF-8: UTF-16, a legacy single-byte encoding, or
				// binary. It is searched as read shows it, decoded.
				if d, ok := decodedForSearch(r, buf[:n]); ok {
					return s.file(d, display, minLine)
				}
				return found{binary: true}
			}
		}
		end := n
		if !eof {
			end = bytes.LastIndexByte(buf[:n], '\n') + 1
		}
		searchEnd := end
		if !eof && ctx > 0 {
			searchEnd = linesBack(buf, end, ctx)
		}
		if searchEnd > from {
			lineAtFrom, stop = s.region(buf[:n], from, searchEnd, lineAtFrom, display, minLine, &f)
		}
		if eof {
			break
		}
		from = max(searchEnd, from)
		keep := from
		if ctx > 0 {
			keep = linesBack(buf, keep, ctx)
		}
		if keep > 0 {
			copy(buf, buf[keep:n])
			n -= keep
			from -= keep
		}
		if n == len(buf) {
			if len(buf) >= cmp.Or(s.opt.maxBufSize, grepMaxBufSize) {
				// A line longer than any buffer: the file is searched up
				// to it, and said to be too large.
				f.tooLarge = true
				break
			}
			bigger := make([]byte, 2*len(buf))
			copy(bigger, buf[:n])
			buf = bigger
		}
	}
	return f
}

// decodedForSearch names the encoding of a file that is not UTF-8 as read
// does, on the whole file (head is what was read of r so far), and returns
// the file from its start again, decoded to UTF-8; ok is false for a binary
// file, or one that cannot be read from its start again.
func decodedForSearch(r io.Reader, head []byte) (io.Reader, bool) {
	f, ok := r.(io.ReadSeeker)
	if !ok {
		return nil, false
	}
	var sniff text.Sniffer
	sniff.Feed(head)
	chunk := make([]byte, 64<<10)
	for {
		n, err := f.Read(chunk)
		sniff.Feed(chunk[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
	}
	enc, binary := sniff.Result()
	if binary {
		return nil, false
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, false
	}
	return enc.NewReader(f), true
}

// linesBack is where the k-th line before the line starting at end
// starts in buf (0 when there are fewer).
func linesBack(buf []byte, end, k int) int {
	i := end
	for ; k > 0 && i > 0; k-- {
		j := bytes.LastIndexByte(buf[:i-1], '\n')
		i = j + 1
	}
	return i
}

// region searches the whole lines buf[from:to], the first of which is
// line lineAtFrom, and returns the line number at to. stop says the
// file need not be read further (Files: one match is enough). It builds
// no more matches than could be shown: Limit of them, or until their
// JSON passes MaxBytes, or none once the search is full.
func (s *scanner) region(buf []byte, from, to, lineAtFrom int, display string, minLine int, f *found) (int, bool) {
	p, ln := from, lineAtFrom
	for p < to {
		ms, me := s.m.find(buf[p:to])
		if ms < 0 {
			break
		}
		ms, me = ms+p, me+p
		ls := p + bytes.LastIndexByte(buf[p:ms], '\n') + 1
		le := to
		if i := bytes.IndexByte(buf[ms:to], '\n'); i >= 0 {
			le = ms + i
		}
		ln += bytes.Count(buf[p:ls], []byte{'\n'})
		if me > le {
			// The match runs past the line's end: a match must lie in
			// one line, so look again in the line alone.
			s2, e2 := s.m.find(buf[ls:le])
			if s2 < 0 {
				ln++
				p = le + 1
				continue
			}
			ms, me = ls+s2, ls+e2
		}
		if ln > minLine {
			f.count++
			switch {
			case s.opt.Files:
				return ln + 1, true
			case s.opt.Count:
			case len(f.matches) < s.opt.Limit && s.built <= s.opt.MaxBytes && !s.full.Load():
				m := s.match(buf, ls, le, ms, me, ln, display)
				size := jsonSize(m)
				s.built += size
				f.matches = append(f.matches, m)
				f.sizes = append(f.sizes, size)
			}
		}
		ln++
		p = le + 1
	}
	if p < to {
		ln += bytes.Count(buf[p:to], []byte{'\n'})
	}
	return ln, false
}

// keep shows one match (or file), unless it would pass the limit or the
// byte budget: then the result is truncated, and the rest only counted.
func (g *grepper) keep(v any, size int, rel string, line int) {
	if g.full {
		return
	}
	shown := len(g.res.Matches) + len(g.res.Files)
	if shown >= g.opt.Limit || g.used+size > g.opt.MaxBytes {
		g.full, g.res.Truncated = true, true
		g.fullFlag.Store(true)
		return
	}
	g.used += size
	switch v := v.(type) {
	case Match:
		g.res.Matches = append(g.res.Matches, v)
	case FileMatch:
		g.res.Files = append(g.res.Files, v)
	}
	g.last = cursor{arg: g.arg, rel: rel, line: line}
}

// match builds the match of the line buf[ls:le], matched at [s, e).
func (sc *scanner) match(buf []byte, ls, le, s, e, ln int, display string) Match {
	m := Match{Path: display, Line: ln, Column: s - ls + 1}
	m.Text, m.Cut = cutAround(trimCR(buf[ls:le]), s-ls, e-ls, sc.opt.MaxLineBytes)
	if k := sc.opt.Context; k > 0 {
		start := linesBack(buf, ls, k)
		for i := start; i < ls; {
			j := i + bytes.IndexByte(buf[i:ls], '\n')
			m.Before = append(m.Before, text.CutLine(trimCR(buf[i:j]), sc.opt.MaxLineBytes))
			i = j + 1
		}
		for i := le + 1; i < len(buf) && len(m.After) < k; {
			j := bytes.IndexByte(buf[i:], '\n')
			if j < 0 {
				j = len(buf) - i
			}
			m.After = append(m.After, text.CutLine(trimCR(buf[i:i+j]), sc.opt.MaxLineBytes))
			i += j + 1
		}
	}
	return m
}

// jsonSize is the bytes v takes in a JSON list: its encoding and a comma.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 1
	}
	return len(b) + 1
}

func trimCR(b []byte) []byte { return bytes.TrimSuffix(b, []byte{'\r'}) }

// cutAround is line, cut to about max bytes around the match [s, e) when
// longer, each cut end marked, and whether it was cut.
func cutAround(line []byte, s, e, max int) (string, bool) {
	if len(line) <= max {
		return string(line), false
	}
	e = min(e, len(line))
	start := s - (max-(e-s))/2
	start = min(max0(start), len(line)-max)
	start = max0(start)
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(start+max, len(line))
	out := string(text.TrimToRune(line[start:end]))
	if start > 0 {
		out = ellipsis + out
	}
	if end < len(line) {
		out += ellipsis
	}
	return out, true
}

func max0(i int) int {
	if i < 0 {
		return 0
	}
	return i
}
