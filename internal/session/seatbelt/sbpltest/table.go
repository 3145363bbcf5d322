package sbpltest

import (
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// table holds the scenarios, one txtar archive each: its comment says
// what it shows and lists its cases, its sockets and where its $WORK is
// made (under), its files are the
// layout under $WORK (a name ending in / a folder) and config.yaml, the
// trusted system config ($WORK expanded).
//
//go:embed table/*.txtar
var table embed.FS

// Case operations: what a case does to its path, in a shell of the
// session (Linux) or asked of the profile (the evaluator).
const (
	OpRead    = "read"    // read the file's content
	OpWrite   = "write"   // append to the file, made where missing
	OpMkdir   = "mkdir"   // make the folder
	OpRm      = "rm"      // remove the file or empty folder
	OpMv      = "mv"      // rename it to its name with .moved added
	OpConnect = "connect" // connect to the unix socket
	OpTCP     = "tcp"     // connect to the scenario's TCP listener on 127.0.0.1 ("$PORT")
)

// Case is one line "case OP PATH allow|deny" of a scenario: PATH is
// relative to $WORK.
type Case struct {
	Op    string
	Path  string
	Allow bool
	Line  int
}

// String names the case as the table writes it.
func (c Case) String() string {
	v := "deny"
	if c.Allow {
		v = "allow"
	}
	return fmt.Sprintf("line %d: case %s %s %s", c.Line, c.Op, c.Path, v)
}

// Scenario is one archive of the table. Cases run in order in one
// session: an allowed case never changes what a later one finds.
type Scenario struct {
	Name string
	// Config is the trusted system config, $WORK not expanded.
	Config string
	// Files are the layout: name (relative to $WORK) to content.
	Files []txtar.File
	// Serve are the unix sockets (relative to $WORK) served outside the
	// session before it starts.
	Serve []string
	// Under, when not "", is the folder the scenario's $WORK is made in
	// (a line "under /home"), for a case that needs a place of the
	// disk's own: /home, a home folder outside every writable root.
	Under string
	Cases []Case
}

// Scenarios are the table's scenarios, sorted by name.
func Scenarios() ([]Scenario, error) {
	names, err := table.ReadDir("table")
	if err != nil {
		return nil, err
	}
	var out []Scenario
	for _, n := range names {
		b, err := table.ReadFile(path.Join("table", n.Name()))
		if err != nil {
			return nil, err
		}
		s, err := parseScenario(strings.TrimSuffix(n.Name(), ".txtar"), txtar.Parse(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name(), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseScenario reads one archive.
func parseScenario(name string, a *txtar.Archive) (Scenario, error) {
	s := Scenario{Name: name}
	for i, line := range strings.Split(string(a.Comment), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "under" && len(f) == 2 && path.IsAbs(f[1]):
			s.Under = f[1]
		case f[0] == "serve" && len(f) == 2:
			s.Serve = append(s.Serve, f[1])
		case f[0] == "case" && len(f) == 4 && (f[3] == "allow" || f[3] == "deny"):
			switch f[1] {
			case OpRead, OpWrite, OpMkdir, OpRm, OpMv, OpConnect, OpTCP:
			default:
				return s, fmt.Errorf("line %d: unknown operation %q", i+1, f[1])
			}
			s.Cases = append(s.Cases, Case{Op: f[1], Path: f[2], Allow: f[3] == "allow", Line: i + 1})
		default:
			return s, fmt.Errorf("line %d: %q is neither a case, a serve nor a comment", i+1, line)
		}
	}
	for _, f := range a.Files {
		if f.Name == "config.yaml" {
			s.Config = string(f.Data)
			continue
		}
		s.Files = append(s.Files, f)
	}
	if len(s.Cases) == 0 {
		return s, fmt.Errorf("no case")
	}
	return s, nil
}

// ConfigAt is the scenario's config with $WORK as work.
func (s Scenario) ConfigAt(work string) string { return strings.ReplaceAll(s.Config, "$WORK", work) }

// Object is one operation a case asks of a profile.
type Object struct {
	Op     string
	Object string
}

// Objects are the operations case c asks of a profile in a layout at
// work, each of which must be allowed for the case to be: paths given
// through resolve (the real path, as the kernel matches it), port the
// scenario's TCP listener's.
func (c Case) Objects(work string, port int, resolve func(string) (string, error)) ([]Object, error) {
	p := filepath.Join(work, filepath.FromSlash(c.Path))
	if c.Op == OpTCP {
		return []Object{{NetworkOutbound, "ip:127.0.0.1:" + strconv.Itoa(port)}}, nil
	}
	real, err := resolve(p)
	if err != nil {
		return nil, err
	}
	switch c.Op {
	case OpRead:
		return []Object{{FileReadData, real}}, nil
	case OpWrite:
		if _, err := os.Lstat(p); err == nil {
			return []Object{{FileWriteData, real}}, nil
		}
		return []Object{{FileWriteCreate, real}}, nil
	case OpMkdir:
		return []Object{{FileWriteCreate, real}}, nil
	case OpRm:
		return []Object{{FileWriteUnlink, real}}, nil
	case OpMv:
		return []Object{{FileWriteUnlink, real}, {FileWriteCreate, real + ".moved"}}, nil
	case OpConnect:
		return []Object{{NetworkOutbound, real}}, nil
	}
	return nil, fmt.Errorf("%s: unknown operation", c)
}

// DecideCase says whether p allows every operation of c (Objects).
func (p *Profile) DecideCase(c Case, work string, port int, resolve func(string) (string, error)) (bool, error) {
	objs, err := c.Objects(work, port, resolve)
	if err != nil {
		return false, err
	}
	for _, o := range objs {
		ok, err := p.Decide(o.Op, o.Object)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
