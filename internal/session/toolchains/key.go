package toolchains

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// cacheVars are the variables, by name or prefix (ending in _ or
// a capital's run), whose value can change what askAll finds: the
// toolchains', the folders theirs default to, $PATH.
var cacheVars = []string{"GO", "npm_config_", "NPM_CONFIG_", "PIP_", "CARGO_", "RUSTUP_", "PYTHON", "VIRTUAL_ENV",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME", "PATH"}

// keyOf is what askAll's answer for env depends on, as one digest: the
// variables that can move a cache (cacheVars, their values), and the
// identity of every toolchain on $PATH and of every config file askAll
// reads or a toolchain asked reads for its cache (each as its resolved
// path, device, inode, size, mtime and ctime, or its absence). An answer kept under the key askAll had
// holds as long as the key is the same: a toolchain replaced or
// upgraded, a config written, a variable changed, and the key changes.
// It stats a few dozen paths and runs nothing.
func keyOf(env []string) string {
	t := newEnviron(env)
	var lines []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(cacheVars, func(p string) bool { return strings.HasPrefix(k, p) }) {
			// The last value of a name wins: an earlier one is replaced.
			lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "env "+k+"=") })
			lines = append(lines, "env "+kv)
		}
	}
	slices.Sort(lines)
	// Several lookups name the same file (npm's prefix config is often
	// a global one, pip's shims are pip and pip3): each is looked at once.
	ids := map[string]string{}
	file := func(kind, p string) {
		if p == "" {
			return
		}
		id, ok := ids[p]
		if !ok {
			id = fileIdentity(p)
			ids[p] = id
		}
		lines = append(lines, kind+" "+p+" "+id)
	}
	for _, name := range []string{"go", "npm", "pip", "pip3", "cargo"} {
		p := t.lookPath(name)
		file("bin "+name, p)
		switch {
		case p == "":
		case name == "go":
			for _, c := range t.goConfigs(p) {
				file("config", c)
			}
		case name == "npm":
			for _, c := range t.npmConfigs(p) {
				file("config", c)
			}
		}
	}
	for _, c := range t.pipConfigs() {
		file("config", c)
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// fileIdentity is the identity of the file at p: its resolved path,
// device, inode, size, mtime and ctime; "absent" where there is none.
func fileIdentity(p string) string {
	real, id, err := resolvedIdentity(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case err != nil:
		return "unreadable: " + err.Error()
	}
	return real + " " + id
}

// evalIdentity is resolvedIdentity by path: the symlinks resolved one
// component at a time (filepath.EvalSymlinks), then the file looked at.
func evalIdentity(p string) (real, id string, err error) {
	if real, err = filepath.EvalSymlinks(p); err != nil {
		return "", "", err
	}
	id, err = statIdentity(real)
	return real, id, err
}
