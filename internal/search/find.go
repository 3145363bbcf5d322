package search

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// FindOptions shape a search of names.
type FindOptions struct {
	// Glob matches the path of each entry relative to the searched
	// folder ("**" for any number of folders); one with no "/" matches
	// the base name at any depth ("*.go").
	Glob string
	// Type keeps only entries of this type: file, dir, symlink or
	// other; "" keeps all.
	Type string
	// Limit is the most entries shown.
	Limit int
	// MaxBytes is the most bytes of JSON the shown entries may take.
	MaxBytes int
	// Sort orders the entries by name (path, the default), size, lines
	// or mtime: size, lines and mtime largest and newest first, as ls -S
	// and ls -t order; Reverse turns the order round. A sorted search
	// looks at every entry before it shows any, and has no cursor.
	Sort    string
	Reverse bool
	// Lines counts the lines of each text file shown (sorting by lines
	// counts them all), bounded: see countLines.
	Lines bool
	WalkOptions
}

// The orders of FindOptions.Sort.
const (
	SortName  = "name"
	SortSize  = "size"
	SortLines = "lines"
	SortMtime = "mtime"
)

// Found is one entry find found.
type Found struct {
	// Path names the entry as the searched folder was given, joined with
	// its path beneath it.
	Path string `json:"path"`
	Type string `json:"type"`
	// Size is the entry's size in bytes (a symlink's is its text's).
	Size int64 `json:"size"`
	// Mtime is the entry's modification time, given when sorted by it.
	Mtime string `json:"mtime,omitempty"`
	// Lines is a text file's line count, asked for with --lines; nil
	// when not asked for or not counted, and then LinesSkipped says why
	// (countLines).
	Lines        *int   `json:"lines,omitempty"`
	LinesSkipped string `json:"lines_skipped,omitempty"`
}

// FindResult is what find found, sorted by path.
type FindResult struct {
	Entries []Found `json:"entries"`
	// Total counts every entry found after the cursor, shown or not.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// LeftOut counts the entries found but not shown.
	LeftOut int `json:"left_out,omitzero"`
	// Cursor continues the search after the last entry shown (--after).
	Cursor string `json:"cursor,omitempty"`
	// Skipped counts what the walk left out, by reason (binary and
	// too_large do not apply: find opens no file).
	Skipped Skipped `json:"skipped"`
	// Hidden counts entries under deny_read, never looked at.
	Hidden int `json:"hidden,omitempty"`
}

// typeName is the result's name of each type a folder gives ("" for
// none). A switch, not a map a process would build at its start.
func typeName(t sandbox.EntryType) string {
	switch t {
	case sandbox.EntryFile:
		return fsops.TypeFile
	case sandbox.EntryDir:
		return fsops.TypeDir
	case sandbox.EntrySymlink:
		return fsops.TypeSymlink
	case sandbox.EntryOther:
		return fsops.TypeOther
	}
	return ""
}

// Find walks the folder t (see WalkOptions) and lists the entries whose
// path matches the glob. Symlinks are listed as symlinks, never followed.
// The whole tree is walked even past the limit; past it, entries are
// counted by name and by the type their folder gives, never looked at,
// as ls counts: a file with several links that a deny_read glob covers
// is then counted in Total rather than in Hidden.
func Find(f *sandbox.Fence, t sandbox.Target, opt FindOptions) (*FindResult, error) {
	if err := checkFindOptions(opt); err != nil {
		return nil, err
	}
	if opt.Sort != "" || opt.Reverse {
		if opt.After != "" {
			return nil, fserr.New(fserr.InvalidArgument, "find: --after continues a search in path order; a sorted search has no cursor (raise --limit)")
		}
		return findSorted(f, t, opt)
	}
	w, err := newWalker(f, "find", opt.WalkOptions)
	if err != nil {
		return nil, err
	}
	if w.resume(0) {
		return nil, fserr.New(fserr.InvalidArgument, "find: --after: not a cursor of this command")
	}
	d, err := openFindTop(f, t)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res := &FindResult{Entries: []Found{}}
	used, full := 0, false
	var last cursor
	byName, byPath := compileFindGlob(opt.Glob)
	lc := &lineCounter{}
	// keep decides on what the folder says of the entry, its name and
	// type, before its path is made: most entries fail here, and past
	// the limit the rest are counted here, never looked at, as ls counts.
	w.keep = func(e sandbox.DirEntry) bool {
		if byName != nil && !byName(e.Name) {
			return false
		}
		if opt.Type != "" && typeName(e.Type) != opt.Type {
			return false
		}
		if full && byPath == nil {
			res.Total++
			return false
		}
		return true
	}
	w.visit = func(d *sandbox.ListDir, e sandbox.DirEntry, rel string) error {
		if byPath != nil && !byPath(rel) {
			return nil
		}
		if full {
			res.Total++
			return nil
		}
		st, err := d.Lstat(e.Name)
		switch {
		case fserr.CodeOf(err) == fserr.SandboxDenied:
			w.hidden++ // a file with several links, one of them a secret
			return nil
		case err != nil:
			w.skip.Unreadable++
			return nil
		}
		// Only the type and size: describe's mode and time strings would
		// be made for every entry shown and dropped.
		typ := fsops.TypeOf(uint32(st.Mode))
		if opt.Type != "" && typ != opt.Type {
			return nil // changed type since the folder was read
		}
		res.Total++
		found := Found{Path: displayPath(t.Given, rel), Type: typ, Size: st.Size}
		if opt.Lines {
			found.countLines(d, e.Name, lc)
		}
		size := 1 + found.jsonLen()
		if len(res.Entries) >= opt.Limit || used+size > opt.MaxBytes {
			full, res.Truncated = true, true
			return nil
		}
		used += size
		res.Entries = append(res.Entries, found)
		last = cursor{rel: rel}
		return nil
	}
	if err := w.walk(d, "", nil); err != nil {
		return nil, err
	}
	res.Skipped, res.Hidden = w.skip, w.hidden
	if res.Truncated {
		res.LeftOut = res.Total - len(res.Entries)
		if len(res.Entries) > 0 {
			res.Cursor = last.String()
		}
	}
	return res, nil
}

// checkFindOptions refuses options find cannot take.
func checkFindOptions(opt FindOptions) error {
	if opt.Limit < 1 || opt.MaxBytes < 1 {
		return fserr.New(fserr.InvalidArgument, "find: --limit and --max-bytes must be 1 or more")
	}
	if !doublestar.ValidatePattern(opt.Glob) {
		return fserr.New(fserr.InvalidArgument, "find: "+strconv.Quote(opt.Glob)+": not a valid glob")
	}
	switch opt.Type {
	case "", fsops.TypeFile, fsops.TypeDir, fsops.TypeSymlink, fsops.TypeOther:
	default:
		return fserr.New(fserr.InvalidArgument, "find: --type must be file, dir, symlink or other")
	}
	switch opt.Sort {
	case "", SortName, SortSize, SortLines, SortMtime:
	default:
		return fserr.New(fserr.InvalidArgument, "find: --sort must be name, size, lines or mtime")
	}
	return nil
}

// compileFindGlob returns the test of an entry against glob, as
// globMatch tests it, on its name or on its path relative to the searched
// folder (one of the two is nil). A walk asks it of every entry, so the
// usual shapes are told apart once: a glob with no "/" (or "**/" and one
// with none after it: any depth) that is a plain name, "*" and a plain
// suffix ("*.go"), or "*" alone, is a string compare on the name; any
// other with no "/" is doublestar's on the name, and one with a "/"
// doublestar's on the path.
func compileFindGlob(glob string) (byName func(name string) bool, byPath func(rel string) bool) {
	base := glob
	if rest, ok := strings.CutPrefix(glob, "**/"); ok && rest != "" && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") {
		base = rest
	}
	if strings.Contains(base, "/") {
		return nil, func(rel string) bool { return globMatch(glob, rel) }
	}
	switch lit := strings.TrimPrefix(base, "*"); {
	case strings.ContainsAny(lit, "*?[]{}\\"):
		return func(name string) bool { return globMatch(base, name) }, nil
	case base == "*":
		return func(string) bool { return true }, nil
	case lit != base:
		return func(name string) bool { return strings.HasSuffix(name, lit) }, nil
	default:
		return func(name string) bool { return name == lit }, nil
	}
}

// jsonLen is the length of json.Marshal(f), which bounds the result in
// bytes, without the reflection: for a path of printable ASCII that JSON
// does not escape, the usual case, it is counted; any other path is
// marshalled.
func (f Found) jsonLen() int {
	if f.Lines != nil || f.LinesSkipped != "" || f.Mtime != "" {
		b, err := json.Marshal(f)
		if err != nil {
			return 0
		}
		return len(b)
	}
	for i := 0; i < len(f.Path); i++ {
		if c := f.Path[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(f)
			if err != nil {
				return 0
			}
			return len(b)
		}
	}
	// {"path":"…","type":"…","size":N}
	var digits [20]byte
	return len(`{"path":"","type":"","size":}`) + len(f.Path) + len(f.Type) + len(strconv.AppendInt(digits[:0], f.Size, 10))
}

// openFindTop opens the folder a find searches, through the fence; a
// file there is FS_NOT_DIR with the way to look at one file.
func openFindTop(f *sandbox.Fence, t sandbox.Target) (*sandbox.ListDir, error) {
	d, err := f.OpenList("find", t)
	if fserr.CodeOf(err) == fserr.NotDir {
		e := fserr.Wrap(fserr.NotDir, "find: "+t.Given+": not a folder", err)
		e.Hint = "use stat for a single file"
		return nil, e
	}
	return d, err
}
