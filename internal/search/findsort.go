package search

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// The bounds of find --lines: a file larger than maxLinesFileBytes is not
// counted, nor any file once maxLinesTotalBytes have been read in one
// call.
const (
	maxLinesFileBytes  = 16 << 20
	maxLinesTotalBytes = 256 << 20
)

// The reasons of Found.LinesSkipped.
const (
	LinesNotFile    = "not_a_file"
	LinesBinary     = "binary"
	LinesTooLarge   = "too_large"
	LinesBudget     = "budget"
	LinesUnreadable = "unreadable"
)

// lineCounter is the budget of one call's line counts.
type lineCounter struct {
	read int64
	buf  []byte
}

// countLines counts the lines of the entry name of d into f: the number
// of line feeds, and one more for a last line without one. Only regular
// files are counted; one whose first bytes are not UTF-8 text (binary,
// or UTF-16) is not, nor one larger than maxLinesFileBytes, nor any once
// the call has read maxLinesTotalBytes: LinesSkipped says which.
func (f *Found) countLines(d *sandbox.ListDir, name string, lc *lineCounter) {
	switch {
	case f.Type != fsops.TypeFile:
		f.LinesSkipped = LinesNotFile
		return
	case f.Size > maxLinesFileBytes:
		f.LinesSkipped = LinesTooLarge
		return
	case lc.read+f.Size > maxLinesTotalBytes:
		f.LinesSkipped = LinesBudget
		return
	}
	h, err := d.OpenFile(name)
	if err != nil {
		f.LinesSkipped = LinesUnreadable
		return
	}
	defer h.Close()
	if lc.buf == nil {
		lc.buf = make([]byte, 64<<10)
	}
	n, lines, first := 0, 0, true
	last := byte('\n')
	for {
		m, err := h.Read(lc.buf)
		if m > 0 {
			if first && text.IsBinary(lc.buf[:min(m, text.SniffLen)]) {
				f.LinesSkipped = LinesBinary
				return
			}
			first = false
			lines += bytes.Count(lc.buf[:m], []byte{'\n'})
			last = lc.buf[m-1]
			n += m
			lc.read += int64(m)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.LinesSkipped = LinesUnreadable
			return
		}
		if n > maxLinesFileBytes { // grew since it was looked at
			f.LinesSkipped = LinesTooLarge
			return
		}
	}
	if last != '\n' {
		lines++
	}
	f.Lines = &lines
}

// sortedFound is an entry of a sorted find with what it is sorted by.
type sortedFound struct {
	Found
	mtime time.Time
}

// findSorted is Find for a sorted search: every entry that matches is
// looked at (and, for --lines or --sort lines, counted), then sorted, and
// the first --limit shown within --max-bytes.
func findSorted(f *sandbox.Fence, t sandbox.Target, opt FindOptions) (*FindResult, error) {
	w, err := newWalker(f, "find", opt.WalkOptions)
	if err != nil {
		return nil, err
	}
	d, err := openFindTop(f, t)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	byName, byPath := compileFindGlob(opt.Glob)
	lc := &lineCounter{}
	count := opt.Lines || opt.Sort == SortLines
	var all []sortedFound
	w.keep = func(e sandbox.DirEntry) bool {
		return (byName == nil || byName(e.Name)) && (opt.Type == "" || typeName(e.Type) == opt.Type)
	}
	w.visit = func(d *sandbox.ListDir, e sandbox.DirEntry, rel string) error {
		if byPath != nil && !byPath(rel) {
			return nil
		}
		st, err := d.Lstat(e.Name)
		switch {
		case fserr.CodeOf(err) == fserr.SandboxDenied:
			w.hidden++
			return nil
		case err != nil:
			w.skip.Unreadable++
			return nil
		}
		typ := fsops.TypeOf(uint32(st.Mode))
		if opt.Type != "" && typ != opt.Type {
			return nil
		}
		s := sortedFound{Found: Found{Path: displayPath(t.Given, rel), Type: typ, Size: st.Size},
			mtime: time.Unix(st.Mtim.Unix())}
		if opt.Sort == SortMtime {
			s.Mtime = fsops.MtimeString(s.mtime)
		}
		if count {
			s.countLines(d, e.Name, lc)
		}
		all = append(all, s)
		return nil
	}
	if err := w.walk(d, "", nil); err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, findOrder(opt.Sort, opt.Reverse))
	res := &FindResult{Entries: []Found{}, Total: len(all), Skipped: w.skip, Hidden: w.hidden}
	used := 0
	for _, s := range all {
		size := 1 + s.jsonLen()
		if len(res.Entries) >= opt.Limit || used+size > opt.MaxBytes {
			res.Truncated = true
			break
		}
		used += size
		res.Entries = append(res.Entries, s.Found)
	}
	res.LeftOut = res.Total - len(res.Entries)
	return res, nil
}

// findOrder compares two entries for --sort by: size, lines and mtime
// largest and newest first, name by path; ties by path. reverse turns
// the whole order round. An entry without a line count sorts after
// every counted one, whichever the direction.
func findOrder(by string, reverse bool) func(a, b sortedFound) int {
	return func(a, b sortedFound) int {
		var c int
		switch by {
		case SortSize:
			c = -cmp.Compare(a.Size, b.Size)
		case SortMtime:
			c = -a.mtime.Compare(b.mtime)
		case SortLines:
			switch {
			case a.Lines == nil && b.Lines == nil:
			case a.Lines == nil:
				return 1
			case b.Lines == nil:
				return -1
			default:
				c = -cmp.Compare(*a.Lines, *b.Lines)
			}
		}
		if c == 0 {
			c = cmp.Compare(a.Path, b.Path)
		}
		if reverse {
			return -c
		}
		return c
	}
}
