package pathmatch

import (
	"strings"
)

// The deny_read list compiled once per fence. A walk asks it
// of every entry of a tree, and most entries match no glob: testing each
// glob in turn, "**" trying every depth with path.Match, cost a search of
// Go's source four times what grep -rn takes. A glob covers a path only
// when it matches the path or one of its folders exactly, and that match
// ends on a component the glob's last component matches. So each glob is
// indexed by its last component (a name, a suffix "*.pem", a prefix
// ".env.*", or, for anything else, a glob tried on every component); a
// path's components are looked up in the index, and only the globs found
// there are matched in full, on the folder the component ends. Most paths
// find none and are passed for a map lookup and a few string compares a
// component.

// Matcher is a compiled list of globs (the fence's deny_read list): the
// index of the first of them that covers a path is the one a denial
// names, as with the globs tried in turn.
type Matcher struct {
	// parts are each glob's components, trailing "**" dropped: under the
	// covering rule "x/**" covers what "x" covers.
	parts [][]string
	// everything are the globs left with no component ("**", "/"): they
	// cover every path.
	everything []int
	byName     map[string][]int
	suffixes   []affixGlob
	prefixes   []affixGlob
	// others are the globs whose last component is neither a name, a
	// suffix nor a prefix ("a?c", "[ab]*"): tried on every component.
	others []int
	// fold says the globs and the paths asked of them are compared in
	// any case (fold.go).
	fold bool
	// anchored are the literal leading folders of the globs that start
	// at an absolute folder: the trees where a rule names files by their
	// place, not by their name (MayApplyBeneath).
	anchored []string
}

// affixGlob is a last component "*s" (a suffix) or "s*" (a prefix).
type affixGlob struct {
	s    string
	glob int
}

// NewMatcher compiles globs, in Match's syntax; a path matches them in
// any case where this OS's volumes are case-insensitive (fold.go).
func NewMatcher(globs []string) *Matcher { return newMatcher(globs, foldCase) }

// newMatcher is NewMatcher, in any case where fold is set.
func newMatcher(globs []string, fold bool) *Matcher {
	m := &Matcher{byName: map[string][]int{}, fold: fold}
	for i, g := range globs {
		g = folded(g, fold)
		parts := Components(g)
		for len(parts) > 0 && parts[len(parts)-1] == "**" {
			parts = parts[:len(parts)-1]
		}
		m.parts = append(m.parts, parts)
		if strings.HasPrefix(g, "/") {
			if prefix, _ := LiteralPrefix(g); prefix != "" {
				m.anchored = append(m.anchored, prefix)
			}
		}
		if len(parts) == 0 {
			m.everything = append(m.everything, i)
			continue
		}
		last := parts[len(parts)-1]
		switch {
		case !hasGlobMeta(last):
			m.byName[last] = append(m.byName[last], i)
		case len(last) > 1 && last[0] == '*' && !hasGlobMeta(last[1:]):
			m.suffixes = append(m.suffixes, affixGlob{last[1:], i})
		case len(last) > 1 && last[len(last)-1] == '*' && !hasGlobMeta(last[:len(last)-1]):
			m.prefixes = append(m.prefixes, affixGlob{last[:len(last)-1], i})
		default:
			m.others = append(m.others, i)
		}
	}
	return m
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[\\") }

// First returns the index of the first glob that covers the
// slash-separated path name, or -1: what Covers, tried on each glob
// in turn, finds.
func (m *Matcher) First(name string) int {
	if len(m.parts) == 0 {
		return -1
	}
	name = folded(name, m.fold)
	best := -1
	if len(m.everything) > 0 {
		best = m.everything[0]
	}
	for end := 0; end < len(name); {
		start := end
		for start < len(name) && name[start] == '/' {
			start++
		}
		end = start
		for end < len(name) && name[end] != '/' {
			end++
		}
		comp := name[start:end]
		if comp == "" || comp == "." {
			continue
		}
		best = m.atComponent(name[:end], comp, best)
	}
	return best
}

// atComponent returns the lower of best and the first glob whose last
// component matches comp and that matches the folder dir, which ends on
// comp, exactly.
func (m *Matcher) atComponent(dir, comp string, best int) int {
	return m.atComponentOf(func() string { return dir }, comp, best)
}

// atComponentOf is atComponent with the folder made only when a glob's
// last component matches comp: a walk asks of every entry, and for most
// no glob is a candidate, so the path is never joined.
func (m *Matcher) atComponentOf(dirOf func() string, comp string, best int) int {
	var dir []string
	try := func(i int) {
		if best >= 0 && i >= best {
			return
		}
		if dir == nil {
			dir = Components(dirOf())
		}
		if MatchParts(m.parts[i], dir) {
			best = i
		}
	}
	for _, i := range m.byName[comp] {
		try(i)
	}
	for _, a := range m.suffixes {
		if strings.HasSuffix(comp, a.s) {
			try(a.glob)
		}
	}
	for _, a := range m.prefixes {
		if strings.HasPrefix(comp, a.s) {
			try(a.glob)
		}
	}
	for _, i := range m.others {
		try(i)
	}
	return best
}

// Child returns the first glob that covers dir/name when dir itself is
// covered by none (it was checked when it was opened), or -1. Only a glob
// matching dir/name exactly can cover it then, so only name is looked up.
func (m *Matcher) Child(dir, name string) int {
	if len(m.parts) == 0 {
		return -1
	}
	if len(m.everything) > 0 {
		return m.everything[0]
	}
	dir, name = folded(dir, m.fold), folded(name, m.fold)
	return m.atComponentOf(func() string { return joinPath(dir, name) }, name, -1)
}

// NameCandidate reports whether some glob's last component matches name:
// whether a file of that name could be covered wherever its folder is.
func (m *Matcher) NameCandidate(name string) bool {
	name = folded(name, m.fold)
	if len(m.everything) > 0 || len(m.others) > 0 || len(m.byName[name]) > 0 {
		return true
	}
	for _, a := range m.suffixes {
		if strings.HasSuffix(name, a.s) {
			return true
		}
	}
	for _, a := range m.prefixes {
		if strings.HasPrefix(name, a.s) {
			return true
		}
	}
	return false
}

// MayApplyBeneath reports whether p lies in the tree of an anchored
// glob's literal prefix (or is a folder above one), where a rule names
// files by their place.
func (m *Matcher) MayApplyBeneath(p string) bool {
	p = folded(p, m.fold)
	for _, a := range m.anchored {
		if pathWithin(a, p) || pathWithin(p, a) {
			return true
		}
	}
	return false
}

// pathWithin reports whether p is dir or lies beneath it.
func pathWithin(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}
