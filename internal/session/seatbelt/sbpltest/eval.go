package sbpltest

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Operations the evaluator answers for.
const (
	FileReadData    = "file-read-data"
	FileWriteData   = "file-write-data"
	FileWriteCreate = "file-write-create"
	FileWriteUnlink = "file-write-unlink"
	// NetworkOutbound to a unix socket's path, or to an IP address and
	// port written "ip:HOST:PORT".
	NetworkOutbound = "network-outbound"
)

// Profile is a compiled profile: its rules in order, each allow or deny.
type Profile struct {
	rules []rule
}

// rule is one (allow OPS FILTERS…) or (deny OPS FILTERS…).
type rule struct {
	allow   bool
	ops     []string
	filters []*node // any of them matches; none: every object
	line    int
}

// node is an s-expression: a list, or an atom (a symbol, or a string
// when str is set; raw for #"…").
type node struct {
	list []*node
	atom string
	str  bool
	raw  bool
	line int
}

// Compile reads text, the profile, with the values of its parameters. It
// refuses what the generator never writes: a form other than version,
// allow and deny, a profile that does not deny by default, a parameter
// not given, a regex with a backslash.
func Compile(text string, params map[string]string) (*Profile, error) {
	forms, err := parse(text)
	if err != nil {
		return nil, err
	}
	p := &Profile{}
	for i, f := range forms {
		if len(f.list) == 0 || f.list[0].str || f.list[0].list != nil {
			return nil, fmt.Errorf("line %d: not a form", f.line)
		}
		head := f.list[0].atom
		switch {
		case head == "version":
			continue
		case head == "deny" && len(f.list) == 2 && f.list[1].atom == "default":
			if i != 1 {
				return nil, fmt.Errorf("line %d: (deny default) is not the profile's first rule", f.line)
			}
			p.rules = append(p.rules, rule{ops: []string{"default"}, line: f.line})
		case head == "allow" || head == "deny":
			r := rule{allow: head == "allow", line: f.line}
			for _, x := range f.list[1:] {
				if x.list == nil && !x.str {
					if x.atom == "default" && r.allow {
						return nil, fmt.Errorf("line %d: (allow default)", f.line)
					}
					r.ops = append(r.ops, x.atom)
					continue
				}
				if err := substitute(x, params); err != nil {
					return nil, err
				}
				r.filters = append(r.filters, x)
			}
			p.rules = append(p.rules, r)
		default:
			return nil, fmt.Errorf("line %d: form %q is not one the generator writes", f.line, head)
		}
	}
	if len(p.rules) == 0 || p.rules[0].allow || p.rules[0].ops[0] != "default" {
		return nil, fmt.Errorf("the profile does not deny by default")
	}
	return p, nil
}

// substitute replaces each (param "NAME") beneath n by its value.
func substitute(n *node, params map[string]string) error {
	for i, x := range n.list {
		if len(x.list) == 2 && x.list[0].atom == "param" && x.list[1].str {
			v, ok := params[x.list[1].atom]
			if !ok {
				return fmt.Errorf("line %d: parameter %q not given", x.line, x.list[1].atom)
			}
			n.list[i] = &node{atom: v, str: true, line: x.line}
			continue
		}
		if err := substitute(x, params); err != nil {
			return err
		}
	}
	return nil
}

// Decide says whether the profile allows op on object (a real path, or
// for NetworkOutbound "ip:HOST:PORT"): the last rule that matches
// decides, as in Seatbelt. An error says a rule that could match uses a
// filter the evaluator does not know.
func (p *Profile) Decide(op, object string) (bool, error) {
	allowed := false
	for _, r := range p.rules {
		if !opMatches(r.ops, op) {
			continue
		}
		if len(r.filters) == 0 {
			allowed = r.allow
			continue
		}
		for _, f := range r.filters {
			ok, err := matches(f, op, object)
			if err != nil {
				return false, fmt.Errorf("line %d: %w", r.line, err)
			}
			if ok {
				allowed = r.allow
				break
			}
		}
	}
	return allowed, nil
}

// opMatches says whether one of ops names op: itself, default, or a
// prefix ending in * (file-write* names file-write-create).
func opMatches(ops []string, op string) bool {
	for _, o := range ops {
		if o == op || o == "default" || (strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*"))) {
			return true
		}
	}
	return false
}

// matches says whether the filter f holds for object under op.
func matches(f *node, op, object string) (bool, error) {
	if len(f.list) == 0 || f.list[0].list != nil {
		return false, fmt.Errorf("not a filter")
	}
	args := f.list[1:]
	ip := strings.HasPrefix(object, "ip:")
	switch name := f.list[0].atom; name {
	case "literal", "subpath", "regex":
		if len(args) != 1 || !args[0].str {
			return false, fmt.Errorf("(%s) takes one string", name)
		}
		if ip {
			return false, nil
		}
		return pathFilter(name, args[0], object)
	case "require-all", "require-not":
		if name == "require-not" && len(args) != 1 {
			return false, fmt.Errorf("(require-not) takes one filter")
		}
		for _, a := range args {
			ok, err := matches(a, op, object)
			if err != nil || ok == (name == "require-not") {
				return false, err
			}
		}
		return true, nil
	case "remote":
		return remote(args, object)
	case "target", "socket-domain", "local", "global-name":
		// Of processes, sockets' creation, bind and Mach services:
		// never of the operations this evaluator answers for.
		if strings.HasPrefix(op, "file-") || op == NetworkOutbound && name != "local" {
			return false, fmt.Errorf("filter (%s) on %s", name, op)
		}
		return false, nil
	default:
		return false, fmt.Errorf("filter (%s) is not one the generator writes", name)
	}
}

// pathFilter is literal, subpath (the path itself and all beneath) or
// regex on path.
func pathFilter(name string, arg *node, path string) (bool, error) {
	v := arg.atom
	switch name {
	case "literal":
		return !arg.raw && path == v, nil
	case "subpath":
		return !arg.raw && (path == v || strings.HasPrefix(path, strings.TrimSuffix(v, "/")+"/")), nil
	}
	if !arg.raw {
		return false, fmt.Errorf("(regex) of a string that is not #\"…\"")
	}
	if strings.Contains(v, `\`) {
		// See the seatbelt package: its regexes hold no backslash.
		return false, fmt.Errorf("regex %q holds a backslash", v)
	}
	re, err := regexp.Compile(v)
	if err != nil {
		return false, err
	}
	return re.MatchString(path), nil
}

// remote is (remote unix-socket [(path-literal P)]) or (remote ip
// "HOST:PORT", * for any) against object.
func remote(args []*node, object string) (bool, error) {
	if len(args) == 0 {
		return false, fmt.Errorf("(remote) with no kind")
	}
	switch args[0].atom {
	case "unix-socket":
		if strings.HasPrefix(object, "ip:") {
			return false, nil
		}
		if len(args) == 1 {
			return true, nil
		}
		pl := args[1]
		if len(args) != 2 || len(pl.list) != 2 || pl.list[0].atom != "path-literal" || !pl.list[1].str {
			return false, fmt.Errorf("(remote unix-socket) takes one (path-literal P)")
		}
		return object == pl.list[1].atom, nil
	case "ip":
		addr, ok := strings.CutPrefix(object, "ip:")
		if !ok {
			return false, nil
		}
		if len(args) != 2 || !args[1].str {
			return false, fmt.Errorf(`(remote ip) takes one "HOST:PORT"`)
		}
		return ipMatches(args[1].atom, addr)
	}
	return false, fmt.Errorf("(remote %s) is not one the generator writes", args[0].atom)
}

// ipMatches says whether addr (HOST:PORT) is what pattern names: * for
// any host or port, localhost for a loopback address.
func ipMatches(pattern, addr string) (bool, error) {
	ph, pp, err := net.SplitHostPort(pattern)
	if err != nil {
		return false, err
	}
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if pp != "*" {
		if _, err := strconv.Atoi(pp); err != nil || pp != port {
			return false, err
		}
	}
	switch ph {
	case "*":
		return true, nil
	case "localhost":
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback(), nil
	}
	return false, fmt.Errorf("host %q is not one the generator writes", ph)
}
