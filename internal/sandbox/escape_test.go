//go:build unix

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// The escape table, after Go's os.Root tests: one list of paths that try
// to leave the workspace, run against every primitive of this package
// that resolves a path. A primitive added to resolvers gets every case;
// a case added to escapeCases runs against every primitive, and its row
// must say what each one does.
//
// Every case starts from canonLayout: the workspace ws (a writable root,
// and the base of relative paths) and a folder out beside it, which
// deny_read covers. An outcome is "ok:" and the path of what the
// primitive opened (found by its identity, relative to the temp root; a
// Dir's outcome adds the name it holds), or the error: an fserr code for
// the fence's primitives, an errno for the raw ones. Whatever the row
// says, a fenced primitive that opens anything under out fails the test:
// the row can pin how a primitive refuses, never let it escape.

// escapeCase is one row of the escape table.
type escapeCase struct {
	name   string
	layout []string // added to canonLayout
	// path is resolved against ws when relative; "$ROOT" is the temp
	// root and "$OUTFD" a /proc/self/fd entry of a descriptor open on
	// out.
	path string
	// swap runs after the path was resolved and before the primitive is
	// called: "-name" removes root/name, anything else is a layout entry.
	swap []string
	want map[string]string // primitive name → outcome
}

// resolver is one primitive under the table: run resolves path (as
// written, or as the fence resolved it into t before any swap) and
// returns what it opened, as a descriptor whose identity the table
// looks up, and the name in it for a Dir; or a path, for a primitive
// that opens nothing.
type resolver struct {
	name string
	// fenced primitives must never open anything under out.
	fenced bool
	run    func(e *escapeEnv, path string, t Target) (opened, error)
}

// opened is what a primitive gave back.
type opened struct {
	st   *unix.Stat_t
	name string // a Dir's name of the target, appended to the outcome
	path string // a primitive that returns a path, not a handle
}

// escapeEnv is one case's world: its temp root, the fence over ws, and
// ws's path.
type escapeEnv struct {
	root, ws string
	f        *Fence
	outFD    int // a descriptor open on out, for the /proc/self/fd cases
}

// expand replaces "$ROOT" and "$OUTFD" in s.
func (e *escapeEnv) expand(s string) string {
	s = strings.ReplaceAll(s, "$OUTFD", "/proc/self/fd/"+strconv.Itoa(e.outFD))
	return strings.ReplaceAll(s, "$ROOT", e.root)
}

func statFd(fd int) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// fdOpened is the identity of fd, which it closes.
func fdOpened(fd int, err error) (opened, error) {
	if err != nil {
		return opened{}, err
	}
	defer unix.Close(fd)
	st, err := statFd(fd)
	return opened{st: st}, err
}

func fileOpened(f *os.File, err error) (opened, error) {
	if err != nil {
		return opened{}, err
	}
	defer f.Close()
	st, err := statFd(int(f.Fd()))
	return opened{st: st}, err
}

// absGiven is path made absolute against ws without cleaning it, so a
// ".." reaches the resolver as written.
func (e *escapeEnv) absGiven(path string) string {
	if strings.HasPrefix(path, "/") {
		return path
	}
	return e.ws + "/" + path
}

// resolvers are every primitive of the package that resolves a path.
// Fence.Mkdir, Fence.Remove and Fence.Move open their folders through
// openForWrite (or openDir after the same decision), run here; denyid's walk and the mount layer resolve
// through walkPath, and the session's child and overlays through
// kernel.OpenNoSymlinks.
var resolvers = []resolver{
	{name: "Canonical", run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		p, err := Canonical(e.ws, path)
		return opened{path: p}, err
	}},
	{name: "OpenNoSymlinks", run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		return fdOpened(openNoSymlinks(e.absGiven(path), oPath))
	}},
	{name: "walkPath", run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		w, err := walkPath(e.absGiven(path), walkSpec{flags: oPath, followLast: true})
		return fdOpened(w.fd, err)
	}},
	{name: "walkFrom(ws)", run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		ws, err := openRead(unix.AT_FDCWD, e.ws, oPath|unix.O_DIRECTORY)
		if err != nil {
			return opened{}, err
		}
		defer unix.Close(ws)
		w, err := walkFrom(ws, e.ws, path, walkSpec{flags: unix.O_RDONLY | unix.O_DIRECTORY, noSymlinks: true})
		return fdOpened(w.fd, err)
	}},
	{name: "Resolve", run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		return opened{path: t.Path}, nil
	}},
	{name: "OpenRead", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		return fileOpened(e.f.OpenRead("read", t))
	}},
	{name: "OpenCurrent", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		return fileOpened(e.f.OpenCurrent("write", t))
	}},
	{name: "Lstat", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		st, err := e.f.Lstat("stat", t)
		return opened{st: &unix.Stat_t{Dev: st.Dev, Ino: st.Ino}}, err
	}},
	{name: "OpenList", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		d, err := e.f.OpenList("list", t)
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		st, err := statFd(d.fd())
		return opened{st: st}, err
	}},
	{name: "ListDir.OpenFile", fenced: true, run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		d, err := e.f.OpenList("list", Target{Given: e.ws, Path: e.ws})
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		h, err := d.OpenFile(path)
		if err != nil {
			return opened{}, err
		}
		defer h.Close()
		st, err := statFd(h.fd)
		return opened{st: st}, err
	}},
	{name: "ListDir.Open", fenced: true, run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		d, err := e.f.OpenList("list", Target{Given: e.ws, Path: e.ws})
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		sub, err := d.Open(path)
		if err != nil {
			return opened{}, err
		}
		defer sub.Close()
		st, err := statFd(sub.fd())
		return opened{st: st}, err
	}},
	{name: "ListDir.Lstat", fenced: true, run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		d, err := e.f.OpenList("list", Target{Given: e.ws, Path: e.ws})
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		st, err := d.Lstat(path)
		return opened{st: &unix.Stat_t{Dev: st.Dev, Ino: st.Ino}}, err
	}},
	{name: "Lock", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		h, err := e.f.Lock("write", &t, Intent{})
		if err != nil {
			return opened{}, err
		}
		defer h.Close()
		if h.File != nil {
			st, err := statFd(int(h.File.Fd()))
			return opened{st: st}, err
		}
		st, err := statFd(h.Dir.fd)
		return opened{st: st, name: h.Name}, err
	}},
	{name: "openForWrite", fenced: true, run: func(e *escapeEnv, _ string, t Target) (opened, error) {
		d, name, err := e.f.openForWrite("write", &t, Intent{})
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		st, err := statFd(d.fd)
		return opened{st: st, name: name}, err
	}},
	{name: "Dir.Open", fenced: true, run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		d, err := e.wsDir()
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		return fileOpened(d.Open(path, unix.O_RDONLY, 0))
	}},
	{name: "Dir.Lstat", fenced: true, run: func(e *escapeEnv, path string, _ Target) (opened, error) {
		d, err := e.wsDir()
		if err != nil {
			return opened{}, err
		}
		defer d.Close()
		st, err := d.Lstat(path)
		return opened{st: &st}, err
	}},
}

// wsDir is the Dir of ws, as a write of a new file in it opens it.
func (e *escapeEnv) wsDir() (*Dir, error) {
	t, err := e.f.Resolve(filepath.Join(e.ws, "new"))
	if err != nil {
		return nil, err
	}
	d, _, err := e.f.openForWrite("write", &t, Intent{})
	return d, err
}

// escapeCases are the table's rows. The outcomes were pinned by running
// the table against the resolver as it stood before it was split into
// steps.
var escapeCases = []escapeCase{
	{name: "dotdot out", path: "../out/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ok:out/x",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "EXDEV",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "dotdot deep", path: "d/../../out/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ok:out/x",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "EXDEV",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "dotdot past slash", path: "/../../..$ROOT/out/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ok:out/x",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "EXDEV",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "absolute link to a file", layout: []string{"ws/abs => $ROOT/out/x"}, path: "abs", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "ok:ws/abs",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_SANDBOX_DENIED",
		"Dir.Lstat":        "ok:ws/abs",
	}},
	{name: "absolute link to a folder", layout: []string{"ws/absd => $ROOT/out"}, path: "absd/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "relative link to a file", layout: []string{"ws/rel => ../out/x"}, path: "rel", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "ok:ws/rel",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_SANDBOX_DENIED",
		"Dir.Lstat":        "ok:ws/rel",
	}},
	{name: "relative link to a folder", layout: []string{"ws/reld => ../out"}, path: "reld/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "relative link with a trailing slash", layout: []string{"ws/reld => ../out"}, path: "reld/", want: map[string]string{
		"Canonical":        "ok:out",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "link inside", layout: []string{"ws/in => d/g"}, path: "in", want: map[string]string{
		"Canonical":        "ok:ws/d/g",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:ws/d/g",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:ws/d/g",
		"OpenRead":         "ok:ws/d/g",
		"OpenCurrent":      "ok:ws/d/g",
		"Lstat":            "ok:ws/in",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "ok:ws/in",
		"Lock":             "ok:ws/d/g",
		"openForWrite":     "ok:ws/d/g",
		"Dir.Open":         "FS_SANDBOX_DENIED",
		"Dir.Lstat":        "ok:ws/in",
	}},
	{name: "dangling link to outside", layout: []string{"ws/dl => ../out/nope"}, path: "dl", want: map[string]string{
		"Canonical":        "ok:out/nope",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ENOENT",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/nope",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "ok:ws/dl",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_SANDBOX_DENIED",
		"Dir.Lstat":        "ok:ws/dl",
	}},
	{name: "loop", layout: []string{"ws/a => b", "ws/b => a"}, path: "a", want: map[string]string{
		"Canonical":        "ELOOP",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ELOOP",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:",
		"OpenRead":         "FS_IO",
		"OpenCurrent":      "FS_IO",
		"Lstat":            "FS_IO",
		"OpenList":         "FS_IO",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "FS_IO",
		"Lock":             "FS_IO",
		"openForWrite":     "FS_IO",
		"Dir.Open":         "FS_IO",
		"Dir.Lstat":        "FS_IO",
	}},
	{name: "self loop on the way", layout: []string{"ws/s => s"}, path: "s/x", want: map[string]string{
		"Canonical":        "ELOOP",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ELOOP",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:",
		"OpenRead":         "FS_IO",
		"OpenCurrent":      "FS_IO",
		"Lstat":            "FS_IO",
		"OpenList":         "FS_IO",
		"ListDir.OpenFile": "FS_IO",
		"ListDir.Open":     "FS_IO",
		"ListDir.Lstat":    "FS_IO",
		"Lock":             "FS_IO",
		"openForWrite":     "FS_IO",
		"Dir.Open":         "FS_IO",
		"Dir.Lstat":        "FS_IO",
	}},
	{name: "folder swapped for a link to outside", layout: []string{"ws/sw/", "ws/sw/x"}, path: "sw/x",
		swap: []string{"-ws/sw", "ws/sw => ../out"}, want: map[string]string{
			"Canonical":        "ok:out/x",
			"OpenNoSymlinks":   "ELOOP",
			"walkPath":         "ok:out/x",
			"walkFrom(ws)":     "ELOOP",
			"Resolve":          "ok:ws/sw/x",
			"OpenRead":         "FS_SANDBOX_DENIED",
			"OpenCurrent":      "FS_SANDBOX_DENIED",
			"Lstat":            "FS_SANDBOX_DENIED",
			"OpenList":         "FS_NOT_DIR",
			"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
			"ListDir.Open":     "FS_INVALID_ARGUMENT",
			"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
			"Lock":             "FS_SANDBOX_DENIED",
			"openForWrite":     "FS_SANDBOX_DENIED",
			"Dir.Open":         "FS_INVALID_ARGUMENT",
			"Dir.Lstat":        "FS_INVALID_ARGUMENT",
		}},
	{name: "file swapped for a link to outside", path: "f",
		swap: []string{"-ws/f", "ws/f => ../out/x"}, want: map[string]string{
			"Canonical":        "ok:out/x",
			"OpenNoSymlinks":   "ELOOP",
			"walkPath":         "ok:out/x",
			"walkFrom(ws)":     "ELOOP",
			"Resolve":          "ok:ws/f",
			"OpenRead":         "FS_SANDBOX_DENIED",
			"OpenCurrent":      "FS_SANDBOX_DENIED",
			"Lstat":            "ok:ws/f",
			"OpenList":         "FS_NOT_DIR",
			"ListDir.OpenFile": "FS_IO",
			"ListDir.Open":     "FS_IO",
			"ListDir.Lstat":    "ok:ws/f",
			"Lock":             "FS_SANDBOX_DENIED",
			"openForWrite":     "FS_SANDBOX_DENIED",
			"Dir.Open":         "FS_SANDBOX_DENIED",
			"Dir.Lstat":        "ok:ws/f",
		}},
	{name: "proc self fd", path: "$OUTFD/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ENOENT",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "proc self root", path: "/proc/self/root$ROOT/out/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ENOENT",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "link to proc self fd", layout: []string{"ws/pfd => $OUTFD"}, path: "pfd/x", want: map[string]string{
		"Canonical":        "ok:out/x",
		"OpenNoSymlinks":   "ELOOP",
		"walkPath":         "ok:out/x",
		"walkFrom(ws)":     "ELOOP",
		"Resolve":          "ok:out/x",
		"OpenRead":         "FS_SANDBOX_DENIED",
		"OpenCurrent":      "FS_SANDBOX_DENIED",
		"Lstat":            "FS_SANDBOX_DENIED",
		"OpenList":         "FS_SANDBOX_DENIED",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_SANDBOX_DENIED",
		"openForWrite":     "FS_SANDBOX_DENIED",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "file where a folder is expected", path: "f/x", want: map[string]string{
		"Canonical":        "ENOTDIR",
		"OpenNoSymlinks":   "ENOTDIR",
		"walkPath":         "ENOTDIR",
		"walkFrom(ws)":     "ENOTDIR",
		"Resolve":          "ok:",
		"OpenRead":         "FS_NOT_DIR",
		"OpenCurrent":      "FS_NOT_DIR",
		"Lstat":            "FS_NOT_DIR",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_NOT_DIR",
		"ListDir.Open":     "FS_NOT_DIR",
		"ListDir.Lstat":    "FS_NOT_DIR",
		"Lock":             "FS_NOT_DIR",
		"openForWrite":     "FS_NOT_DIR",
		"Dir.Open":         "FS_NOT_DIR",
		"Dir.Lstat":        "FS_NOT_DIR",
	}},
	{name: "file with a trailing slash", path: "f/", want: map[string]string{
		"Canonical":        "ok:ws/f",
		"OpenNoSymlinks":   "ok:ws/f",
		"walkPath":         "ok:ws/f",
		"walkFrom(ws)":     "ENOTDIR",
		"Resolve":          "ok:ws/f",
		"OpenRead":         "ok:ws/f",
		"OpenCurrent":      "ok:ws/f",
		"Lstat":            "ok:ws/f",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "ok:ws/f",
		"openForWrite":     "ok:ws/f",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "folder with a trailing slash", path: "d/", want: map[string]string{
		"Canonical":        "ok:ws/d",
		"OpenNoSymlinks":   "ok:ws/d",
		"walkPath":         "ok:ws/d",
		"walkFrom(ws)":     "ok:ws/d",
		"Resolve":          "ok:ws/d",
		"OpenRead":         "ok:ws/d",
		"OpenCurrent":      "ok:ws/d",
		"Lstat":            "ok:ws/d",
		"OpenList":         "ok:ws/d",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_IS_DIR",
		"openForWrite":     "ok:ws/d",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "long name", path: strings.Repeat("n", 300), want: map[string]string{
		"Canonical":        "ENAMETOOLONG",
		"OpenNoSymlinks":   "ENAMETOOLONG",
		"walkPath":         "ENAMETOOLONG",
		"walkFrom(ws)":     "ENAMETOOLONG",
		"Resolve":          "ok:",
		"OpenRead":         "FS_INVALID_ARGUMENT",
		"OpenCurrent":      "FS_INVALID_ARGUMENT",
		"Lstat":            "FS_INVALID_ARGUMENT",
		"OpenList":         "FS_INVALID_ARGUMENT",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_INVALID_ARGUMENT",
		"openForWrite":     "FS_INVALID_ARGUMENT",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "long path of short names", path: strings.Repeat("d/../", 900) + "f", want: map[string]string{
		"Canonical":        "ok:ws/f",
		"OpenNoSymlinks":   "EINVAL", // no "." or ".." on the way: the child opens canonical paths only
		"walkPath":         "ok:ws/f",
		"walkFrom(ws)":     "ENOTDIR",
		"Resolve":          "ok:ws/f",
		"OpenRead":         "ok:ws/f",
		"OpenCurrent":      "ok:ws/f",
		"Lstat":            "ok:ws/f",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "ok:ws/f",
		"openForWrite":     "ok:ws/f",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "empty components", path: "d//g", want: map[string]string{
		"Canonical":        "ok:ws/d/g",
		"OpenNoSymlinks":   "ok:ws/d/g",
		"walkPath":         "ok:ws/d/g",
		"walkFrom(ws)":     "ENOTDIR",
		"Resolve":          "ok:ws/d/g",
		"OpenRead":         "ok:ws/d/g",
		"OpenCurrent":      "ok:ws/d/g",
		"Lstat":            "ok:ws/d/g",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "ok:ws/d/g",
		"openForWrite":     "ok:ws/d/g",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "dot components", path: "./d/./g", want: map[string]string{
		"Canonical":        "ok:ws/d/g",
		"OpenNoSymlinks":   "ok:ws/d/g",
		"walkPath":         "ok:ws/d/g",
		"walkFrom(ws)":     "ENOTDIR",
		"Resolve":          "ok:ws/d/g",
		"OpenRead":         "ok:ws/d/g",
		"OpenCurrent":      "ok:ws/d/g",
		"Lstat":            "ok:ws/d/g",
		"OpenList":         "FS_NOT_DIR",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "ok:ws/d/g",
		"openForWrite":     "ok:ws/d/g",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
	{name: "empty path", path: "", want: map[string]string{
		"Canonical":        "FS_INVALID_ARGUMENT",
		"OpenNoSymlinks":   "ok:ws",
		"walkPath":         "ok:ws",
		"walkFrom(ws)":     "ok:ws",
		"Resolve":          "ok:",
		"OpenRead":         "FS_INVALID_ARGUMENT",
		"OpenCurrent":      "FS_INVALID_ARGUMENT",
		"Lstat":            "FS_INVALID_ARGUMENT",
		"OpenList":         "FS_INVALID_ARGUMENT",
		"ListDir.OpenFile": "FS_INVALID_ARGUMENT",
		"ListDir.Open":     "FS_INVALID_ARGUMENT",
		"ListDir.Lstat":    "FS_INVALID_ARGUMENT",
		"Lock":             "FS_INVALID_ARGUMENT",
		"openForWrite":     "FS_INVALID_ARGUMENT",
		"Dir.Open":         "FS_INVALID_ARGUMENT",
		"Dir.Lstat":        "FS_INVALID_ARGUMENT",
	}},
}

// escapeSetup makes a temp root for one case with canonLayout and the case's
// layout made, and the identity of everything in it.
func escapeSetup(t *testing.T, tc escapeCase) (*escapeEnv, map[[2]uint64]string) {
	t.Helper()
	root := tempRoot(t)
	makeLayout(t, root, canonLayout...)
	outFD, err := unix.Open(filepath.Join(root, "out"), oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(outFD) })
	p := testPolicy(root, policy.WorkspaceWrite)
	p.DenyRead = []string{filepath.Join(root, "out")}
	e := &escapeEnv{root: root, ws: filepath.Join(root, "ws"), f: NewFence(p), outFD: outFD}
	for _, l := range tc.layout {
		makeLayout(t, root, e.expand(l))
	}
	return e, layoutIdentities(t, root)
}

// layoutIdentities maps the identity of every entry under root (a
// symlink's own) to its path relative to root.
func layoutIdentities(t *testing.T, root string) map[[2]uint64]string {
	t.Helper()
	ids := map[[2]uint64]string{}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		ids[[2]uint64{uint64(st.Dev), st.Ino}] = rel
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// outcome names what a primitive did, as a row of the table says it.
func outcome(e *escapeEnv, r resolver, ids map[[2]uint64]string, got opened, err error) string {
	if err != nil {
		if !r.fenced {
			var errno unix.Errno
			if errors.As(err, &errno) {
				return unix.ErrnoName(errno)
			}
		}
		return string(fserr.CodeOf(err))
	}
	if got.st == nil {
		if rel, rerr := filepath.Rel(e.root, got.path); rerr == nil && !strings.HasPrefix(rel, "..") {
			return "ok:" + rel
		}
		return "ok:" + got.path
	}
	where, ok := ids[[2]uint64{uint64(got.st.Dev), got.st.Ino}]
	if !ok {
		where = "?" // outside the layout: /, /proc…
	}
	if got.name != "" {
		where += "/" + got.name
	}
	return "ok:" + where
}

// TestEscapeTable runs every escape case against every resolver.
func TestEscapeTable(t *testing.T) {
	for _, tc := range escapeCases {
		t.Run(tc.name, func(t *testing.T) {
			var rows []string
			for _, r := range resolvers {
				e, ids := escapeSetup(t, tc)
				path := e.expand(tc.path)
				var got opened
				target, err := e.f.Resolve(path)
				if err == nil || !r.fenced {
					for _, s := range tc.swap {
						if name, ok := strings.CutPrefix(s, "-"); ok {
							if err := os.RemoveAll(filepath.Join(e.root, name)); err != nil {
								t.Fatal(err)
							}
							continue
						}
						makeLayout(t, e.root, e.expand(s))
						// What is swapped in is known by its own
						// identity, not by the inode number of what it
						// replaced, which the file system may or may not
						// give it again.
						name, _, _ := strings.Cut(e.expand(s), " => ")
						var st unix.Stat_t
						if err := unix.Lstat(filepath.Join(e.root, name), &st); err != nil {
							t.Fatal(err)
						}
						ids[[2]uint64{uint64(st.Dev), st.Ino}] = strings.TrimSuffix(name, "/")
					}
					got, err = r.run(e, path, target)
				}
				res := outcome(e, r, ids, got, err)
				if r.fenced && (strings.HasPrefix(res, "ok:out") || strings.HasPrefix(res, "ok:?")) {
					t.Errorf("%s escaped: opened %s", r.name, strings.TrimPrefix(res, "ok:"))
				}
				rows = append(rows, strconv.Quote(r.name)+": "+strconv.Quote(res))
				if want, ok := tc.want[r.name]; !ok || want != res {
					t.Errorf("%s: got %s, want %q", r.name, res, want)
				}
			}
			t.Logf("want: map[string]string{%s}", strings.Join(rows, ", "))
		})
	}
}
