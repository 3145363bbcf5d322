// Package search searches a folder tree through the fence: grep for text
// in files, find for entries by name, over one walk that honours ignore
// files, globs and a resume cursor. Every file is opened as read opens it.
package search

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	ignore "github.com/sabhiram/go-gitignore"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Search walks (grep and find) share one walk: by handle, through
// sandbox.ListDir, one folder at a time in the order of its sorted names,
// so results come sorted by path, component by component ("a/b" before
// "a.txt", as a recursive ls lists them), whatever the file system's
// order. It never follows a symlink, never opens a name under deny_read
// (counted in hidden), skips .git and what .gitignore and .ignore files
// exclude unless told not to, and holds only the names of the folders
// on the way down: its memory grows with the depth of the tree, not its
// size.

// ignoreFiles are the files whose patterns a walk honours, in each folder,
// in this order: a later file's pattern wins over an earlier one's.
var ignoreFiles = []string{".gitignore", ".ignore"}

// maxIgnoreBytes bounds an ignore file read; a larger one is not honoured
// (and counted unreadable).
const maxIgnoreBytes = 1 << 20

// WalkOptions shape what a search walk looks at.
type WalkOptions struct {
	// NoIgnore searches .git and what .gitignore and .ignore exclude.
	NoIgnore bool
	// Globs filter the files by their path relative to the searched
	// folder; a glob with no "/" matches the base name at any depth.
	// A glob that starts with "!" excludes (folders too); if any glob
	// includes, a file must match one of them.
	Globs []string
	// After continues a search after this cursor, from a truncated
	// result of the same call.
	After string
}

// Skipped counts what a search walk left out, by reason.
type Skipped struct {
	// Binary files: a NUL byte or invalid UTF-8 in the first 8 KiB.
	Binary int `json:"binary"`
	// TooLarge files have a line (with its context) longer than the
	// search's bounded buffer (16 MiB) holds: they are searched up to
	// that line.
	TooLarge int `json:"too_large"`
	// Symlink entries are never followed, to a file or a folder.
	Symlink int `json:"symlink"`
	// Ignored entries: .git, and what .gitignore and .ignore exclude.
	Ignored int `json:"ignored"`
	// Glob counts the entries grep's --glob left out, told from Ignored so
	// that a caller knows its own glob from an ignore file.
	// find selects with its GLOB instead, and counts none here.
	Glob int `json:"glob"`
	// Unreadable entries: the OS refused them, or they changed while
	// walked (a file swapped for a symlink, a FIFO).
	Unreadable int `json:"unreadable"`
}

// walker is one search walk.
type walker struct {
	f    *sandbox.Fence
	op   string
	opt  WalkOptions
	incl []string
	excl []string
	skip Skipped
	// hidden counts the entries under deny_read, never opened.
	hidden int
	// cur is where the walk resumes; nil from the start.
	cur *cursor
	// visit is called for each entry the walk keeps, in order, with its
	// path relative to the searched folder. For a folder it is called
	// before the folder's own entries.
	visit func(d *sandbox.ListDir, e sandbox.DirEntry, rel string) error
	// keep, if set, is asked first of each entry visit would be called
	// for, by its name and type alone: an entry it refuses is not
	// visited (a folder is still walked), and its path is never made.
	// Most entries of a search fail on their name (find's "*.go"), and
	// joining a path for each cost more than the test.
	keep func(e sandbox.DirEntry) bool
}

// errStop ends a walk early; it is not a failure.
var errStop = errors.New("stop")

func newWalker(f *sandbox.Fence, op string, opt WalkOptions) (*walker, error) {
	w := &walker{f: f, op: op, opt: opt}
	for _, g := range opt.Globs {
		ex := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		if g == "" || !doublestar.ValidatePattern(g) {
			return nil, fserr.New(fserr.InvalidArgument, op+": --glob "+strconv.Quote(g)+": not a valid glob")
		}
		if ex {
			w.excl = append(w.excl, g)
		} else {
			w.incl = append(w.incl, g)
		}
	}
	if opt.After != "" {
		c, err := parseCursor(opt.After)
		if err != nil {
			return nil, fserr.New(fserr.InvalidArgument, op+": --after: not a cursor of this command")
		}
		w.cur = c
	}
	return w, nil
}

// globMatch reports whether the relative path rel matches the glob g: its
// base name when g has no "/", the whole path otherwise.
func globMatch(g, rel string) bool {
	if !strings.Contains(g, "/") {
		rel = path.Base(rel)
	}
	ok, _ := doublestar.Match(g, rel)
	return ok
}

func (w *walker) excluded(rel string) bool {
	for _, g := range w.excl {
		if globMatch(g, rel) {
			return true
		}
	}
	return false
}

func (w *walker) included(rel string) bool {
	if len(w.incl) == 0 {
		return true
	}
	for _, g := range w.incl {
		if globMatch(g, rel) {
			return true
		}
	}
	return false
}

// ignoreLevel is the ignore patterns of one folder, matched against paths
// relative to it.
type ignoreLevel struct {
	rel string // the folder, relative to the searched one; "" for it
	gi  []*ignore.GitIgnore
}

// ignored reports whether the entry rel (a folder's with a trailing "/")
// is excluded by the ignore files of the folders above it: the deepest
// folder whose patterns have a say decides, and within it the last
// pattern that matches, as git does.
func ignoredBy(levels []ignoreLevel, rel string) bool {
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		sub := rel
		if l.rel != "" {
			sub = strings.TrimPrefix(rel, l.rel+"/")
		}
		for j := len(l.gi) - 1; j >= 0; j-- {
			if ok, p := l.gi[j].MatchesPathHow(sub); p != nil {
				return ok
			}
		}
	}
	return false
}

// loadIgnores reads the ignore files of the folder d, through the fence:
// one under deny_read is never opened, and counted hidden.
func (w *walker) loadIgnores(d *sandbox.ListDir, names map[string]bool, rel string) ignoreLevel {
	l := ignoreLevel{rel: rel}
	for _, name := range ignoreFiles {
		if !names[name] {
			continue
		}
		h, err := d.OpenFile(name)
		if err != nil {
			if fserr.CodeOf(err) == fserr.SandboxDenied {
				continue // counted when the entry itself is met
			}
			w.skip.Unreadable++
			continue
		}
		data, err := io.ReadAll(io.LimitReader(h, maxIgnoreBytes+1))
		h.Close()
		if err != nil || len(data) > maxIgnoreBytes {
			w.skip.Unreadable++
			continue
		}
		lines := strings.Split(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\n")
		l.gi = append(l.gi, ignore.CompileIgnoreLines(lines...))
	}
	return l
}

// walk visits the entries of the folder d, at rel ("" for the searched
// folder), sorted by name, and descends into its folders.
func (w *walker) walk(d *sandbox.ListDir, rel string, levels []ignoreLevel) error {
	entries, err := d.Entries()
	if err != nil {
		w.skip.Unreadable++
		return nil
	}
	slices.SortFunc(entries, func(a, b sandbox.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	if !w.opt.NoIgnore {
		names := map[string]bool{}
		for _, e := range entries {
			if e.Type == sandbox.EntryFile && slices.Contains(ignoreFiles, e.Name) {
				names[e.Name] = true
			}
		}
		if len(names) > 0 {
			if l := w.loadIgnores(d, names, rel); len(l.gi) > 0 {
				levels = append(levels[:len(levels):len(levels)], l)
			}
		}
	}
	// Without a cursor, ignore patterns, --glob or keep, only a folder
	// needs its path before visit.
	pathFirst := w.cur != nil || len(levels) > 0 || len(w.excl) > 0 || len(w.incl) > 0 || w.keep == nil
	for _, e := range entries {
		isDir := e.Type == sandbox.EntryDir
		r := ""
		if pathFirst || isDir {
			r = joinRel(rel, e.Name)
		}
		if w.cur != nil && w.cur.skips(r, isDir) {
			continue
		}
		if d.Hidden(e.Name) {
			w.hidden++
			continue
		}
		if !w.opt.NoIgnore {
			if isDir && e.Name == ".git" {
				w.skip.Ignored++
				continue
			}
			if len(levels) > 0 {
				probe := r
				if isDir {
					probe += "/"
				}
				if ignoredBy(levels, probe) {
					w.skip.Ignored++
					continue
				}
			}
		}
		if w.excluded(r) {
			w.skip.Glob++
			continue
		}
		if !isDir && !w.included(r) {
			w.skip.Glob++
			continue
		}
		if w.keep == nil || w.keep(e) {
			if r == "" {
				r = joinRel(rel, e.Name)
			}
			if err := w.visit(d, e, r); err != nil {
				return err
			}
		}
		if !isDir {
			continue
		}
		sub, err := d.Open(e.Name)
		if err != nil {
			if fserr.CodeOf(err) == fserr.SandboxDenied {
				w.hidden++ // a folder whose identity or real path is denied
			} else {
				w.skip.Unreadable++
			}
			continue
		}
		err = w.walk(sub, r, levels)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// joinRel is the path of the entry name of the folder rel ("" for the
// searched folder), relative to the searched folder.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// cursor is where a truncated search stopped: the last entry it showed
// (its path relative to the searched folder, and for grep its line) in
// the arg-th path searched.
type cursor struct {
	arg  int
	rel  string
	line int
}

const cursorVersion = "1"

// String is the cursor as --after takes it: opaque, URL-safe.
func (c cursor) String() string {
	raw := cursorVersion + "\x00" + strconv.Itoa(c.arg) + "\x00" + strconv.Itoa(c.line) + "\x00" + c.rel
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func parseCursor(s string) (*cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	parts := strings.SplitN(string(raw), "\x00", 4)
	if len(parts) != 4 || parts[0] != cursorVersion {
		return nil, errors.New("bad cursor")
	}
	arg, err1 := strconv.Atoi(parts[1])
	line, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || arg < 0 || line < 0 {
		return nil, errors.New("bad cursor")
	}
	return &cursor{arg: arg, rel: parts[3], line: line}, nil
}

// comparePaths orders slash-separated paths component by component, the
// order of a walk that sorts each folder's names: a folder's entries
// follow it and precede its next sibling.
func comparePaths(a, b string) int {
	for {
		ha, ra, moreA := strings.Cut(a, "/")
		hb, rb, moreB := strings.Cut(b, "/")
		if c := strings.Compare(ha, hb); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

// skips reports whether the walk, resuming after c, leaves out the entry
// rel of the cursor's path argument: it comes before the cursor, and,
// for a folder, the cursor is not beneath it. An entry that is the
// cursor's own is kept when c has a line (the rest of the file follows).
func (c *cursor) skips(rel string, dir bool) bool {
	switch cmp := comparePaths(rel, c.rel); {
	case cmp > 0:
		return false
	case cmp == 0:
		return c.line == 0 && !dir
	default:
		return !(dir && strings.HasPrefix(c.rel, rel+"/"))
	}
}

// resume is what the walk of the arg-th path does with the cursor: skip
// the path altogether (before the cursor's), resume in it, or walk it
// all (after it).
func (w *walker) resume(arg int) (skip bool) {
	if w.cur == nil {
		return false
	}
	switch {
	case arg < w.cur.arg:
		return true
	case arg > w.cur.arg:
		w.cur = nil
	}
	return false
}

// minLine is the last line of the file rel already shown before the
// cursor; 0 when the whole file is new.
func (w *walker) minLine(rel string) int {
	if w.cur == nil || w.cur.rel != rel {
		return 0
	}
	return w.cur.line
}

// displayPath is how results name the entry rel of the searched path
// given: relative to the session cwd as the caller wrote it, "src/a.go";
// bare for ".".
func displayPath(given, rel string) string {
	trimmed := strings.TrimRight(given, "/")
	switch {
	case trimmed == "" && given != "":
		return "/" + rel // the root folder
	case trimmed == ".":
		return rel
	case rel == "":
		return trimmed
	}
	return trimmed + "/" + rel
}
