package pathmatch

import (
	"runtime"
	"strings"
)

// Case. A volume of macOS or Windows is usually case-insensitive: .GIT
// opens .git there, and .ENV opens .env. A rule that denies or protects
// must cover every spelling that opens what it names, so on those OSes
// the deny and protect matchers compare names in any case: the deny_read
// Matcher itself, and the callers of Covers that decide a protected path
// or a deny_read identity, which fold both sides (Folded). A
// case-sensitive volume there gets rules that cover more than they name,
// never less. Allow-lists (workspaces, allow_unix_sockets) match as
// spelled, so nothing is allowed that was not named.

// foldCase says whether this OS's deny and protect rules match in any
// case.
const foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// Folded is s as the deny and protect rules compare it: lowered where
// names match in any case, s itself elsewhere.
func Folded(s string) string { return folded(s, foldCase) }

// FoldedParts is parts, each Folded; parts itself where nothing folds.
func FoldedParts(parts []string) []string {
	if !foldCase {
		return parts
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strings.ToLower(p)
	}
	return out
}

// folded is s lowered when fold is set.
func folded(s string, fold bool) string {
	if !fold {
		return s
	}
	return strings.ToLower(s)
}
