package pathmatch

import "path"

// A deny_read or protected entry that names a folder covers everything
// beneath it, as gitignore does: deny_read: ["~/.ssh"] denies
// ~/.ssh/id_ed25519, and ["secret"] every file in any folder named secret.
// So a path is denied when it, or any folder above it, matches a glob.

// Covers reports whether the slash-separated path name, or one of
// its ancestors, matches pattern (in Match's syntax).
func Covers(pattern, name string) bool {
	return CoverParts(Components(pattern), Components(name))
}

// CoverParts is MatchParts, except that a pattern used up before the
// name is a match: what remains of the name lies beneath what matched.
func CoverParts(pat, name []string) bool { return matchFrom(pat, name, true) }

// MayCover reports whether name, or something beneath it, could be
// covered by pat: whether a walk looking for what pat covers must look
// at name (and into it, when it is a folder).
func MayCover(pat, name []string) bool {
	for ; len(name) > 0; pat, name = pat[1:], name[1:] {
		if len(pat) == 0 || pat[0] == "**" {
			return true // covered, or "**" takes the rest and more
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
	}
	return true
}
