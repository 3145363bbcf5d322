package supervisor

import (
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/internal/session/wire"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// The toolchains' answers, kept (docs/design.md §10, "Toolchain
// caches"). Asking go, npm and pip where their caches are costs every
// session's start tens of milliseconds; the answer changes only when a
// toolchain, a variable or a config file that can move a cache does. So
// the answers are kept in the runtime folder of the session records
// (wire.RuntimeBase), where no session can write, each under the key
// of what it depends on (toolchainsKey), and a start whose key
// is kept asks nothing.

// toolchainsKept is the kind of the kept answers: the file
// "kept-toolchains" in the runtime folder, up to 64 answers (a person's few
// environments, and the tests'), each path in them absolute.
var toolchainsKept = keptKind[toolchainAnswer]{name: toolchainsName, lock: toolchainsName + ".lock",
	version: toolchainsVersion, max: 64, key: func(a toolchainAnswer) string { return a.Key },
	valid: func(a toolchainAnswer) bool {
		return !slices.ContainsFunc(a.Found, func(c foundCache) bool { return !filepath.IsAbs(c.Path) })
	}}

// toolchainsName is the file of the kept answers in the runtime folder.
const toolchainsName = "kept-toolchains"

// toolchainsVersion is the format of the file; another is ignored.
const toolchainsVersion = 1

// toolchainAnswer is toolchainCaches's complete answer for one key.
type toolchainAnswer struct {
	Key   string       `json:"key"`
	Found []foundCache `json:"found"`
}

// findCachesKept is toolchainCaches's answer for env, from the file of kept
// answers in base where it holds one for env's key; else the toolchains
// are asked, and a complete answer is kept. A file that cannot be
// trusted (keptKind.read) is ignored, and replaced by the next answer
// kept; a runtime folder that cannot be trusted is neither read nor
// written.
func findCachesKept(base string, env []string) []foundCache {
	key := toolchainsKey(env)
	if a, ok := toolchainsKept.lookup(base, key); ok {
		return a.Found
	}
	found, complete := toolchainCaches(env)
	if complete {
		toolchainsKept.keep(base, toolchainAnswer{Key: key, Found: found})
	}
	return found
}

// checkTrustedBase checks the runtime folder base and every folder above
// it: owned by root or this user, writable by no one else.
func checkTrustedBase(base string) error { return trust.CheckTrustedFolders(base, false) }

// toolchainsBase is the folder of the kept answers: the runtime folder
// of the session records.
func toolchainsBase() string { return wire.RuntimeBase() }
