package pathmatch

import (
	"path"
	"strings"
)

// Match reports whether the slash-separated path name matches pattern.
// A pattern component "**" matches any number of components, none
// included; every other component is matched by path.Match, so "*" never
// crosses a "/". A malformed pattern matches nothing.
func Match(pattern, name string) bool {
	return MatchParts(Components(pattern), Components(name))
}

// MatchParts is Match on a pattern and a name already split by Split.
func MatchParts(pat, name []string) bool { return matchFrom(pat, name, false) }

// matchFrom matches the components name against pat. With covers, a
// pattern used up before the name is a match too: what remains of the
// name lies beneath the folder that matched.
func matchFrom(pat, name []string, covers bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if matchFrom(rest, name[i:], covers) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return covers || len(name) == 0
}

// Components are the names of the path s, in order: empty names and "."
// are left out (a doubled, leading or trailing slash, "./"), ".." is
// kept.
func Components(s string) []string {
	parts := strings.Split(s, "/")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && p != "." {
			out = append(out, p)
		}
	}
	return out
}
