package fsops

import (
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
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
	// Depth bounds the descent: 1 lists the folder's own entries; 0 means
	// no bound. A depth above 1 implies Recursive.
	Depth int
	// Limit is the most entries returned; Total still counts them all.
	Limit int
}

// Entry is one listed file system entry.
type Entry struct {
	// Name is the path relative to the listed folder ("src/main.go").
	Name string `json:"name"`
	Info
}

// ListResult is a listing, sorted by name, each folder's entries followed
// by their own entries when recursive.
type ListResult struct {
	Entries   []Entry `json:"entries"`
	Total     int     `json:"total"`
	Truncated bool    `json:"truncated"`
	// Hidden counts entries left out because they are under deny_read.
	Hidden int `json:"hidden,omitempty"`
}

// List lists the folder t, by handle: each folder is opened in the one
// above it, never through a symlink, so a listing lists only what the
// fence checked. Entries past the limit are counted but never described.
// A path under deny_read is denied; entries under deny_read are left out.
func List(f *sandbox.Fence, t sandbox.Target, opt ListOptions) (*ListResult, error) {
	if opt.Limit < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "ls: --limit must be zero or more")
	}
	if opt.Depth < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "ls: --depth must be zero or more")
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
	l := &lister{opt: opt, res: &ListResult{Entries: []Entry{}}}
	if err := l.walk(d, "", 1); err != nil {
		return nil, err
	}
	l.res.Truncated = l.res.Total > len(l.res.Entries)
	return l.res, nil
}

type lister struct {
	opt ListOptions
	res *ListResult
}

// walk lists the folder d, whose entries are named prefix+name, at depth
// depth.
func (l *lister) walk(d *sandbox.ListDir, prefix string, depth int) error {
	names, err := d.Names()
	if err != nil {
		return fserr.FromOS("ls", d.Path, err)
	}
	slices.Sort(names)
	for _, name := range names {
		if !l.opt.All && strings.HasPrefix(name, ".") {
			continue
		}
		st, err := d.Lstat(name)
		var denied *sandbox.DeniedError
		switch {
		case errors.As(err, &denied):
			l.res.Hidden++
			continue
		case errors.Is(err, fs.ErrNotExist):
			continue // gone since the folder was read
		case err != nil:
			return fserr.FromOS("ls", d.Path+"/"+name, err)
		}
		l.res.Total++
		if len(l.res.Entries) < l.opt.Limit {
			l.res.Entries = append(l.res.Entries, Entry{Name: prefix + name, Info: describe(&st)})
		}
		if st.IsDir() && (l.opt.Depth == 0 || depth < l.opt.Depth) {
			sub, err := d.Open(name)
			if err != nil {
				return fserr.FromOS("ls", d.Path+"/"+name, err)
			}
			err = l.walk(sub, prefix+name+"/", depth+1)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}
