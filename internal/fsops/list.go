package fsops

import (
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// DefaultListLimit bounds a listing when the caller sets no limit, so a
// folder of a million files never floods an agent's context.
const DefaultListLimit = 1000

// ListOptions shape a listing.
type ListOptions struct {
	// All includes names that start with a dot.
	All bool
	// Recursive descends into folders (never through a symlink).
	Recursive bool
	// Depth bounds the descent: 1 lists the folder's own entries; 0, the
	// zero value, means no bound (ls refuses a typed --depth 0). A depth
	// above 1 implies Recursive.
	Depth int
	// Limit is the most entries returned, 1 or more; the walk stops there.
	Limit int
}

// Entry is one listed file system entry.
type Entry struct {
	// Name is the path relative to the listed folder ("src/main.go").
	Name string `json:"name"`
	Info
	// Error says why the entry could not be described, or, for a folder,
	// listed: the rest of the listing goes on without it.
	Error *EntryError `json:"error,omitempty"`
}

// EntryError is what went wrong with one entry of a listing.
type EntryError struct {
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
}

// ListResult is a listing, sorted by name, each folder's entries followed
// by their own entries when recursive.
type ListResult struct {
	Entries []Entry `json:"entries"`
	// Total counts the entries of every folder read. Past the limit the
	// walk stops: the rest of the folders already read are counted by
	// name, and no further folder is read, so a truncated recursive
	// listing's Total is a lower bound.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// Hidden counts entries left out because they are under deny_read.
	Hidden int `json:"hidden,omitempty"`
}

// List lists the folder t, by handle: each folder is opened in the one
// above it, never through a symlink, so a listing reaches any depth and
// lists only what the fence checked. A path under deny_read is denied;
// entries under deny_read are left out. A folder that cannot be listed is
// an entry with an error, not a failed call. The walk stops at the limit:
// it looks at no more than Limit entries and reads no more than Limit+1
// folders.
func List(f *sandbox.Fence, t sandbox.Target, opt ListOptions) (*ListResult, error) {
	if opt.Limit < 1 {
		return nil, fserr.New(fserr.InvalidArgument, "ls: --limit must be 1 or more")
	}
	if opt.Depth < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "ls: --depth must be 1 or more (--recursive alone has no bound)")
	}
	if opt.Depth > 1 {
		opt.Recursive = true
	}
	if !opt.Recursive {
		opt.Depth = 1
	}
	d, err := f.OpenList("ls", t)
	if fserr.CodeOf(err) == fserr.NotDir {
		e := fserr.Wrap(fserr.NotDir, "ls: "+t.Given+": not a folder", err)
		e.Hint = "use stat for a single file"
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return nil, fserr.FromOS("ls", t.Given, err)
	}
	l := &lister{opt: opt, res: &ListResult{Entries: []Entry{}}}
	l.walk(d, names, "", 1)
	return l.res, nil
}

type lister struct {
	opt ListOptions
	res *ListResult
}

// walk lists the entries names of the folder d, whose entries are named
// prefix+name, at depth depth.
func (l *lister) walk(d *sandbox.ListDir, names []string, prefix string, depth int) {
	slices.Sort(names)
	for _, name := range names {
		if !l.opt.All && strings.HasPrefix(name, ".") {
			continue
		}
		if len(l.res.Entries) >= l.opt.Limit {
			// Past the limit: counted by name, never looked at.
			if d.Hidden(name) {
				l.res.Hidden++
				continue
			}
			l.res.Total++
			l.res.Truncated = true
			continue
		}
		st, err := d.Lstat(name)
		var denied *policy.DeniedError
		switch {
		case errors.As(err, &denied):
			l.res.Hidden++
			continue
		case errors.Is(err, fs.ErrNotExist):
			continue // gone since the folder was read
		}
		l.res.Total++
		e := Entry{Name: prefix + name}
		if err != nil {
			e.Type = TypeOther
			e.Error = entryError(err)
			l.res.Entries = append(l.res.Entries, e)
			continue
		}
		e.Info = describe(&st)
		l.res.Entries = append(l.res.Entries, e)
		if !st.IsDir() || (l.opt.Depth != 0 && depth >= l.opt.Depth) {
			continue
		}
		at := len(l.res.Entries) - 1
		sub, err := d.Open(name)
		if err == nil {
			var subNames []string
			subNames, err = sub.Names()
			if err == nil {
				l.walk(sub, subNames, prefix+name+"/", depth+1)
			}
			sub.Close()
		}
		if err != nil {
			l.res.Entries[at].Error = entryError(err)
		}
	}
}

// entryError is err as an entry's error: its code, and the reason alone,
// since the entry names the path.
func entryError(err error) *EntryError {
	code := fserr.CodeOf(err)
	msg := err.Error()
	var pe *fs.PathError
	var de *policy.DeniedError
	switch {
	case errors.As(err, &de):
		msg = de.Reason
	case errors.As(err, &pe):
		msg = pe.Op + ": " + pe.Err.Error()
	}
	return &EntryError{Code: code, Message: msg}
}
