// Package toolchains finds where the person's toolchains keep their
// caches (docs/design.md §10, "Toolchain caches"): it asks go, npm and
// pip on exec's $PATH, takes cargo's and $XDG_CACHE_HOME's folders from
// the environment, and keeps the answer beside the session records,
// under the key of the toolchains' identity. It runs on the host,
// before the session and outside it, and knows no policy: how a
// session sees each cache is the supervisor's decision.
package toolchains

import (
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/internal/session/kept"
)

// Cache is a cache folder as a toolchain (or the config) names it.
type Cache struct {
	Path string `json:"path"`
	// Source says who named it: "go env GOCACHE", "npm config get
	// cache", "CARGO_HOME", "XDG_CACHE_HOME", "caches" (the config).
	Source string `json:"source"`
}

// The toolchains' answers, kept. Asking go, npm and pip where their
// caches are costs every session's start tens of milliseconds; the
// answer changes only when a toolchain, a variable or a config file
// that can move a cache does. So the answers are kept in the runtime
// folder of the session records (wire.RuntimeBase), where no session
// can write, each under the key of what it depends on (keyOf), and a
// start whose key is kept asks nothing.

// keptAnswers is the kind of the kept answers: the file
// "kept-toolchains" in the runtime folder, up to 64 answers (a person's
// few environments, and the tests'), each path in them absolute.
var keptAnswers = kept.Kind[answer]{Name: keptName, Version: keptVersion, Max: 64,
	Key: func(a answer) string { return a.Key },
	Valid: func(a answer) bool {
		return !slices.ContainsFunc(a.Found, func(c Cache) bool { return !filepath.IsAbs(c.Path) })
	}}

// keptName is the file of the kept answers in the runtime folder.
const keptName = "kept-toolchains"

// keptVersion is the format of the file; another is ignored.
const keptVersion = 1

// answer is askAll's complete answer for one key.
type answer struct {
	Key   string  `json:"key"`
	Found []Cache `json:"found"`
}

// Find is where the toolchains of exec's environment env keep their
// caches, in order (go's, npm's, pip's, cargo's, $XDG_CACHE_HOME), from
// the file of kept answers in the runtime folder base where it holds
// one for env's key; else the toolchains are asked, each for a few
// seconds at most, and a complete answer is kept. A file that cannot be
// trusted (kept.Kind.Read) is ignored, and replaced by the next answer
// kept; a runtime folder that cannot be trusted is neither read nor
// written. It never fails: what a missing or failing tool would have
// said is left out.
func Find(base string, env []string) []Cache {
	key := keyOf(env)
	if a, ok := keptAnswers.Lookup(base, key); ok {
		return a.Found
	}
	found, complete := askAll(env)
	if complete {
		keptAnswers.Keep(base, answer{Key: key, Found: found})
	}
	return found
}
