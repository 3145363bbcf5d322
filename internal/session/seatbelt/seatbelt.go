package seatbelt

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// SandboxExec is the program that applies a profile and runs a command
// under it, by its absolute path: a sandbox-exec planted on PATH is
// never run.
const SandboxExec = "/usr/bin/sandbox-exec"

// MaxString is the longest string the profile or a parameter may hold:
// Seatbelt refuses a whole profile with a string literal of about 1,000
// bytes, so the generator keeps well below.
const MaxString = 900

// MaxArgBytes bounds the profile and its parameters together: they are
// sandbox-exec's arguments, which share macOS's ARG_MAX (1 MiB) with
// CMD's arguments and environment, and thousands of path filters
// compile slowly. A plan past it fails to start rather than run with
// some rule left out.
const MaxArgBytes = 256 << 10

// Param is one parameter of a profile: passed as -DName=Value, read in
// the profile as (param "Name").
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Profile is a Seatbelt profile and the parameters it reads.
type Profile struct {
	Text   string  `json:"profile"`
	Params []Param `json:"params"`
}

// Realpath resolves a path to the real path the kernel reports, every
// symlink followed; filepath.EvalSymlinks is the default.
type Realpath func(string) (string, error)

// Command is the command that runs p's CMD under the profile of p:
// path is always SandboxExec, argv is sandbox-exec's: -p PROFILE, one
// -DNAME=value per parameter, --, then p.Path and p.Argv[1:] (CMD's
// argv[0] is its path: sandbox-exec execs its first operand). realpath
// resolves the plan's paths (nil: filepath.EvalSymlinks). It never runs
// anything, and is never to be used in a nested session (see the
// package's doc).
func Command(p *plan.Plan, realpath Realpath) (path string, argv []string, err error) {
	if p.Path == "" || len(p.Argv) == 0 {
		return "", nil, fserr.New(fserr.InvalidArgument, "seatbelt: the plan has no command")
	}
	if p.Network && p.ProxyFD > 0 && p.ProxyPort == 0 {
		return "", nil, fserr.New(fserr.InvalidArgument, "seatbelt: the plan has a proxy but not its port")
	}
	prof, err := Build(p, realpath)
	if err != nil {
		return "", nil, err
	}
	argv = []string{"sandbox-exec", "-p", prof.Text}
	for _, pa := range prof.Params {
		argv = append(argv, "-D"+pa.Name+"="+pa.Value)
	}
	argv = append(argv, "--", p.Path)
	return SandboxExec, append(argv, p.Argv[1:]...), nil
}

// Build is the profile of p, its paths resolved by realpath (nil:
// filepath.EvalSymlinks). It fails, with nothing made, where a path
// cannot be resolved (but where it does not exist: then its nearest
// existing ancestor is resolved and the rest joined) or is longer than
// MaxString. Every profile it returns passes Lint.
func Build(p *plan.Plan, realpath Realpath) (*Profile, error) {
	if realpath == nil {
		realpath = filepath.EvalSymlinks
	}
	g := &gen{realpath: realpath}
	if err := g.plan(p); err != nil {
		return nil, err
	}
	prof := &Profile{Text: g.b.String(), Params: g.params}
	if n := prof.argBytes(); n > MaxArgBytes {
		return nil, fserr.New(fserr.TooLarge, "seatbelt: the profile of "+strconv.Itoa(len(prof.Params))+" paths is "+
			strconv.Itoa(n)+" bytes with its parameters, over "+strconv.Itoa(MaxArgBytes)+
			"\nhint: fewer protected or deny_read paths inside the writable roots (a folder's glob, not each file)")
	}
	if err := Lint(prof); err != nil {
		return nil, fserr.Wrap(fserr.IO, "seatbelt: "+err.Error(), err)
	}
	return prof, nil
}

// argBytes is the size of the profile and its parameters as arguments.
func (prof *Profile) argBytes() int {
	n := len(prof.Text) + 1
	for _, p := range prof.Params {
		n += len("-D=") + len(p.Name) + len(p.Value) + 1
	}
	return n
}

// gen writes a profile: its text and its parameters.
type gen struct {
	realpath Realpath
	b        strings.Builder
	params   []Param
	// count numbers the parameters of each kind.
	count map[string]int
}

// Resolve is the real path of path by r: the real path of its nearest
// existing ancestor with the rest joined, so a protected path not made
// yet is spelled as the kernel will see it once it is. Any error but
// a missing path fails: a rule on a path not resolved may match nothing.
func (r Realpath) Resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fserr.New(fserr.InvalidArgument, "seatbelt: "+path+": not an absolute path")
	}
	path = filepath.Clean(path)
	var rest []string
	for {
		real, err := r(path)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || path == "/" {
			return "", fserr.Wrap(fserr.IO, "seatbelt: "+path+": "+err.Error(), err)
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = filepath.Dir(path)
	}
}

// param adds a parameter of kind for path, resolved, and returns the
// filter expression that reads it: (param "KIND_N").
func (g *gen) param(kind, path string) (string, error) {
	real, err := g.realpath.Resolve(path)
	if err != nil {
		return "", err
	}
	if len(real) > MaxString {
		return "", fserr.New(fserr.InvalidArgument, "seatbelt: "+real[:64]+"…: a path longer than "+strconv.Itoa(MaxString)+" bytes")
	}
	if g.count == nil {
		g.count = map[string]int{}
	}
	name := kind + "_" + strconv.Itoa(g.count[kind])
	g.count[kind]++
	g.params = append(g.params, Param{Name: name, Value: real})
	return `(param "` + name + `")`, nil
}

// line writes one line of the profile.
func (g *gen) line(s ...string) {
	for _, x := range s {
		g.b.WriteString(x)
	}
	g.b.WriteByte('\n')
}
