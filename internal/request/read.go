package request

import (
	"io"

	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/search"
)

// Read asks for a window of a text file (fsops.Read).
type Read struct {
	Path string `json:"path"`
	// Offset is the first line, counted from 1; 0 is 1.
	Offset int `json:"offset,omitempty"`
	// Limit is the most lines returned, 1 or more; nil takes the
	// bounds' ReadMaxLines.
	Limit *int `json:"limit,omitempty"`
	// MaxBytes bounds the content returned; 0 takes the bounds'
	// ReadMaxBytes.
	MaxBytes int `json:"max_bytes,omitempty"`
}

// Op is OpRead.
func (Read) Op() string { return OpRead }

// Run reads the window r asks for.
func (r Read) Run(x *Exec) (*fsops.ReadResult, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	opt := fsops.ReadOptions{Offset: r.Offset, Limit: x.bounds.ReadMaxLines, MaxBytes: x.bounds.ReadMaxBytes}
	if r.Limit != nil {
		opt.Limit = *r.Limit
	}
	if r.MaxBytes != 0 {
		opt.MaxBytes = r.MaxBytes
	}
	opt.Keep = x.keep()
	res, err := fsops.Read(x.fence, t, opt)
	x.remembered(res)
	return res, err
}

func (r Read) run(x *Exec) (any, error) { return r.Run(x) }

// Stream copies the bytes of r's file to w unchanged (fsops.ReadRaw, the
// CLI's read --raw, MCP's read_media_file); the window options do not
// apply. It returns the bytes copied.
func (r Read) Stream(x *Exec, w io.Writer) (int64, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return 0, err
	}
	return fsops.ReadRaw(x.fence, t, w)
}

// List asks for a folder's entries (fsops.List).
type List struct {
	Path      string `json:"path"`
	All       bool   `json:"all,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
	// Depth bounds the levels listed (1 = the folder's own entries);
	// 0 is no bound.
	Depth int `json:"depth,omitempty"`
	// Limit is the most entries returned, 1 or more.
	Limit int `json:"limit"`
}

// Op is OpList.
func (List) Op() string { return OpList }

// Run lists the folder r names.
func (r List) Run(x *Exec) (*fsops.ListResult, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.List(x.fence, t, fsops.ListOptions{All: r.All, Recursive: r.Recursive, Depth: r.Depth, Limit: r.Limit})
}

func (r List) run(x *Exec) (any, error) { return r.Run(x) }

// Stat asks what a path is and whether a write there would pass the
// policy (fsops.Stat).
type Stat struct {
	Path string `json:"path"`
}

// Op is OpStat.
func (Stat) Op() string { return OpStat }

// Run describes the path r names.
func (r Stat) Run(x *Exec) (*fsops.StatResult, error) {
	t, err := x.Resolve(r.Path)
	if err != nil {
		return nil, err
	}
	return fsops.Stat(x.fence, t)
}

func (r Stat) run(x *Exec) (any, error) { return r.Run(x) }

// Walk are the options of a bounded walk that grep and find share
// (search.WalkOptions).
type Walk struct {
	// NoIgnore also walks .git and what .gitignore and .ignore exclude.
	NoIgnore bool `json:"no_ignore,omitempty"`
	// Globs keep the paths that match one of them; "!GLOB" excludes.
	Globs []string `json:"globs,omitempty"`
	// After continues after this cursor of a truncated result.
	After string `json:"after,omitempty"`
}

func (w Walk) options() search.WalkOptions {
	return search.WalkOptions{NoIgnore: w.NoIgnore, Globs: w.Globs, After: w.After}
}

// Grep asks for the lines that match a pattern beneath some paths
// (search.Grep).
type Grep struct {
	Pattern string `json:"pattern"`
	// Paths are the files and folders searched, as given; none is ".".
	Paths        []string `json:"paths,omitempty"`
	Fixed        bool     `json:"fixed,omitempty"`
	IgnoreCase   bool     `json:"ignore_case,omitempty"`
	Context      int      `json:"context,omitempty"`
	Files        bool     `json:"files,omitempty"`
	Count        bool     `json:"count,omitempty"`
	Limit        int      `json:"limit"`
	MaxBytes     int      `json:"max_bytes"`
	MaxLineBytes int      `json:"max_line_bytes"`
	Walk
}

// Op is OpGrep.
func (Grep) Op() string { return OpGrep }

// Run searches the paths r names, each resolved in order; the first
// that fails to resolve is the error.
func (r Grep) Run(x *Exec) (*search.GrepResult, error) {
	paths := r.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	targets := make([]sandbox.Target, 0, len(paths))
	for _, p := range paths {
		t, err := x.Resolve(p)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return search.Grep(x.fence, targets, search.GrepOptions{Pattern: r.Pattern, Fixed: r.Fixed, IgnoreCase: r.IgnoreCase,
		Context: r.Context, Files: r.Files, Count: r.Count, Limit: r.Limit, MaxBytes: r.MaxBytes, MaxLineBytes: r.MaxLineBytes,
		WalkOptions: r.Walk.options()})
}

func (r Grep) run(x *Exec) (any, error) { return r.Run(x) }

// Find asks for the entries beneath a folder whose path matches a glob
// (search.Find).
type Find struct {
	Glob string `json:"glob"`
	// Path is the folder searched, as given; "" is ".".
	Path string `json:"path,omitempty"`
	// Type keeps entries of one type: file, dir, symlink or other.
	Type     string `json:"type,omitempty"`
	Limit    int    `json:"limit"`
	MaxBytes int    `json:"max_bytes"`
	// Sort, Reverse and Lines are search.FindOptions'.
	Sort    string `json:"sort,omitempty"`
	Reverse bool   `json:"reverse,omitempty"`
	Lines   bool   `json:"lines,omitempty"`
	Walk
}

// Op is OpFind.
func (Find) Op() string { return OpFind }

// Run finds what r asks for.
func (r Find) Run(x *Exec) (*search.FindResult, error) {
	path := r.Path
	if path == "" {
		path = "."
	}
	t, err := x.Resolve(path)
	if err != nil {
		return nil, err
	}
	return search.Find(x.fence, t, search.FindOptions{Glob: r.Glob, Type: r.Type, Limit: r.Limit, MaxBytes: r.MaxBytes,
		Sort: r.Sort, Reverse: r.Reverse, Lines: r.Lines, WalkOptions: r.Walk.options()})
}

func (r Find) run(x *Exec) (any, error) { return r.Run(x) }
