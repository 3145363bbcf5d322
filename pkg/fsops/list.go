package fsops

import (
	"os"
	"path/filepath"
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

// List lists the folder t. Entries past the limit are counted but never
// stat'ed, so counting a huge folder costs one directory read. A path
// under deny_read is denied; entries under deny_read are left out.
func List(f *sandbox.Fence, t sandbox.Target, opt ListOptions) (*ListResult, error) {
	if err := f.CheckRead("ls", t); err != nil {
		return nil, err
	}
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
	fi, err := os.Stat(t.Path)
	if err != nil {
		return nil, fserr.FromOS("ls", t.Given, err)
	}
	if !fi.IsDir() {
		e := fserr.New(fserr.NotDir, "ls: "+t.Given+": not a folder")
		e.Hint = "use stat for a single file"
		return nil, e
	}
	l := &lister{fence: f, opt: opt, res: &ListResult{Entries: []Entry{}}}
	if err := l.walk(t.Path, "", 1); err != nil {
		return nil, err
	}
	l.res.Truncated = l.res.Total > len(l.res.Entries)
	return l.res, nil
}

type lister struct {
	fence *sandbox.Fence
	opt   ListOptions
	res   *ListResult
}

func (l *lister) walk(dir, prefix string, depth int) error {
	d, err := os.Open(dir)
	if err != nil {
		return fserr.FromOS("ls", dir, err)
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fserr.FromOS("ls", dir, err)
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, de := range ents {
		name := de.Name()
		if !l.opt.All && strings.HasPrefix(name, ".") {
			continue
		}
		full := dir + string(filepath.Separator) + name
		if dir == "/" {
			full = "/" + name
		}
		if l.fence.ReadDenied(full) {
			l.res.Hidden++
			continue
		}
		l.res.Total++
		if len(l.res.Entries) < l.opt.Limit {
			if err := l.add(full, prefix+name); err != nil {
				return err
			}
		}
		if de.IsDir() && (l.opt.Depth == 0 || depth < l.opt.Depth) {
			if err := l.walk(full, prefix+name+"/", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lister) add(full, name string) error {
	fi, err := os.Lstat(full)
	if err != nil {
		// The entry vanished between reading the folder and now.
		if os.IsNotExist(err) {
			l.res.Total--
			return nil
		}
		return fserr.FromOS("ls", full, err)
	}
	l.res.Entries = append(l.res.Entries, Entry{Name: name, Info: describe(full, fi)})
	return nil
}
