package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The toolchain caches of a dsh-fs exec session (docs/design.md §10).
// A build inside a session reads and writes the person's caches: Go's
// build and module caches, npm's, pip's, cargo's registry and ~/.cache.
// Made writable roots, they would let the session change what the
// person's own builds use afterwards (a module's source in the module
// cache, a compiled package in the build cache). So each is seen by the
// shell through a copy-on-write layer: an overlay whose lower layer is
// the person's cache and whose upper layer is a private folder of the
// session, mounted at the cache's own path in the session's mount
// namespace and discarded when the session ends.

// foundCache is a cache folder as a toolchain (or the config) names it.
type foundCache struct {
	Path string `json:"path"`
	// Source says who named it: "go env GOCACHE", "npm config get
	// cache", "CARGO_HOME", "XDG_CACHE_HOME", "caches" (the config).
	Source string `json:"source"`
}

// toolchainCaches asks the toolchains on the person's $PATH, with env
// (exec's own), where their caches are, all at once and each for a few
// seconds at most: go env, npm's and pip's cache (their variable, else
// the tool), cargo's registry and git folders, and $XDG_CACHE_HOME. Each
// tool runs in / with no input, in a process group killed at the
// deadline; what a missing or failing tool would have said is left out.
// The list is in that order, without duplicates; complete says every
// tool answered, so the answer may be kept (toolchainsKey).
func toolchainCaches(env []string) (found []foundCache, complete bool) {
	return newToolchainEnv(env).caches()
}

// caches is toolchainCaches in t.
func (t toolchainEnv) caches() (found []foundCache, complete bool) {
	slots := make([][]foundCache, 5)
	failed := make([]bool, 5)
	var wg sync.WaitGroup
	ask := func(slot int, argv []string, sources ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines := t.askTool(argv)
			failed[slot] = lines == nil
			for i, src := range sources {
				if i < len(lines) && filepath.IsAbs(lines[i]) {
					slots[slot] = append(slots[slot], foundCache{Path: lines[i], Source: src})
				}
			}
		}()
	}
	// A tool is asked only where one of its config files names its
	// cache: starting node or python costs exec half a second each.
	names := func(key string, paths []string) bool {
		return slices.ContainsFunc(paths, func(p string) bool { return p != "" && configNames(p, key) })
	}
	if g := t.lookPath("go"); g != "" {
		ask(0, []string{g, "env", "GOCACHE", "GOMODCACHE"}, "go env GOCACHE", "go env GOMODCACHE")
	}
	if n := t.lookPath("npm"); n != "" {
		switch c := t.get("npm_config_cache"); {
		case c != "":
			slots[1] = []foundCache{{c, "npm_config_cache"}}
		case names("cache", t.npmConfigs(n)):
			ask(1, []string{n, "config", "get", "cache"}, "npm config get cache")
		default:
			slots[1] = []foundCache{{t.under(t.home, ".npm"), "npm (its default)"}}
		}
	}
	if pip := t.pip(); pip != "" {
		switch c := t.get("PIP_CACHE_DIR"); {
		case c != "":
			slots[2] = []foundCache{{c, "PIP_CACHE_DIR"}}
		case names("cache-dir", t.pipConfigs()):
			ask(2, []string{pip, "cache", "dir"}, "pip cache dir")
		default:
			slots[2] = []foundCache{{t.under(t.xdgCache, "pip"), "pip (its default)"}}
		}
	}
	if t.lookPath("cargo") != "" {
		cargo, src := t.get("CARGO_HOME"), "CARGO_HOME"
		if !filepath.IsAbs(cargo) {
			cargo, src = t.under(t.home, ".cargo"), "cargo (its default ~/.cargo)"
		}
		slots[3] = []foundCache{{t.under(cargo, "registry"), src}, {t.under(cargo, "git"), src}}
	}
	slots[4] = []foundCache{{t.xdgCache, "XDG_CACHE_HOME (~/.cache)"}}
	wg.Wait()
	for _, s := range slots {
		for _, c := range s {
			if c.Path != "" && !slices.ContainsFunc(found, func(o foundCache) bool { return o.Path == c.Path }) {
				found = append(found, c)
			}
		}
	}
	return found, !slices.Contains(failed, true)
}

// toolchainEnv is what toolchainCaches and toolchainsKey read of the
// person's environment, and where and how long they look.
type toolchainEnv struct {
	env                       []string
	home, xdgCache, xdgConfig string
	// askFor bounds each toolchain asked for its caches: a tool that
	// hangs must not hang exec.
	askFor time.Duration
	// npmGlobal and pipGlobal are the system-wide config files of npm
	// and pip, where no variable names them.
	npmGlobal, pipGlobal []string
}

// newToolchainEnv is the toolchainEnv of exec's environment env.
func newToolchainEnv(env []string) toolchainEnv {
	t := toolchainEnv{env: env, askFor: 3 * time.Second,
		npmGlobal: []string{"/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"},
		pipGlobal: []string{"/etc/pip.conf", "/etc/xdg/pip/pip.conf"}}
	t.home = t.get("HOME")
	if t.xdgCache = t.get("XDG_CACHE_HOME"); !filepath.IsAbs(t.xdgCache) {
		t.xdgCache = t.under(t.home, ".cache")
	}
	if t.xdgConfig = t.get("XDG_CONFIG_HOME"); !filepath.IsAbs(t.xdgConfig) {
		t.xdgConfig = t.under(t.home, ".config")
	}
	return t
}

// get is the value of the variable k; the last one given wins.
func (t toolchainEnv) get(k string) string {
	for i := len(t.env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(t.env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// under is rel in dir; "" where dir is not an absolute path.
func (toolchainEnv) under(dir, rel string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, rel)
}

// lookPath is the program name on $PATH; "" for none.
func (t toolchainEnv) lookPath(name string) string {
	for _, d := range filepath.SplitList(t.get("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && filepath.IsAbs(p) {
			return p
		}
	}
	return ""
}

// pip is pip, else pip3, on $PATH.
func (t toolchainEnv) pip() string {
	if p := t.lookPath("pip"); p != "" {
		return p
	}
	return t.lookPath("pip3")
}

// npmConfigs are the files that can name npm's cache, for the npm at
// npm: the user's, the one a variable names, the global one of its
// prefix and the system's; "/.npmrc" is the project's of /, where npm
// is asked.
func (t toolchainEnv) npmConfigs(npm string) []string {
	return append([]string{t.under(t.home, ".npmrc"), t.get("NPM_CONFIG_USERCONFIG"), t.get("npm_config_userconfig"),
		filepath.Join(filepath.Dir(filepath.Dir(npm)), "etc", "npmrc"), "/.npmrc"}, t.npmGlobal...)
}

// pipConfigs are the files that can name pip's cache.
func (t toolchainEnv) pipConfigs() []string {
	return append([]string{t.get("PIP_CONFIG_FILE"), t.under(t.xdgConfig, "pip/pip.conf"), t.under(t.home, ".pip/pip.conf"),
		t.under(t.get("VIRTUAL_ENV"), "pip.conf")}, t.pipGlobal...)
}

// goConfigs are the files that can move Go's caches: the user's go env
// file ($GOENV, else in the config folder) and the toolchain's go.env,
// beside the bin folder of the go at goBin (symlinks resolved).
func (t toolchainEnv) goConfigs(goBin string) []string {
	env := t.get("GOENV")
	if !filepath.IsAbs(env) {
		env = t.under(t.xdgConfig, "go/env")
	}
	out := []string{env}
	if real, err := filepath.EvalSymlinks(goBin); err == nil {
		out = append(out, filepath.Join(filepath.Dir(filepath.Dir(real)), "go.env"))
	}
	return out
}

// toolchainVars are the variables, by name or prefix (ending in _ or
// a capital's run), whose value can change what toolchainCaches finds: the
// toolchains', the folders theirs default to, $PATH.
var toolchainVars = []string{"GO", "npm_config_", "NPM_CONFIG_", "PIP_", "CARGO_", "RUSTUP_", "PYTHON", "VIRTUAL_ENV",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME", "PATH"}

// toolchainsKey is what toolchainCaches's answer for env depends on, as one
// digest: the variables that can move a cache (toolchainVars, their
// values), and the identity of every toolchain on $PATH and of every
// config file toolchainCaches reads or a toolchain asked reads for its
// cache (each as its resolved path, device, inode, size, mtime and
// ctime, or its absence). An answer kept under the key toolchainCaches had
// holds as long as the key is the same: a toolchain replaced or
// upgraded, a config written, a variable changed, and the key changes.
// It stats a few dozen paths and runs nothing.
func toolchainsKey(env []string) string {
	t := newToolchainEnv(env)
	var lines []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(toolchainVars, func(p string) bool { return strings.HasPrefix(k, p) }) {
			// The last value of a name wins: an earlier one is replaced.
			lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "env "+k+"=") })
			lines = append(lines, "env "+kv)
		}
	}
	slices.Sort(lines)
	file := func(kind, p string) {
		if p != "" {
			lines = append(lines, kind+" "+p+" "+fileIdentity(p))
		}
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
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	var st unix.Stat_t
	if err == nil {
		err = unix.Stat(real, &st)
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%s dev=%d ino=%d size=%d mtime=%d.%09d ctime=%d.%09d", real, st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// configNames reports whether the ini-style config file path has a line
// setting key ("cache=…", "cache-dir = …", pip's "cache_dir" too), in
// its first 64 KiB.
func configNames(path, key string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		k, _, ok := strings.Cut(sc.Text(), "=")
		k = strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
		if ok && k == key {
			return true
		}
	}
	return false
}

// askTool runs argv with t's env for at most t.askFor and returns the
// lines of its standard output; nil when it fails or times out.
func (t toolchainEnv) askTool(argv []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), t.askFor)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir = "/"
	c.Env = append(slices.Clip(t.env), "GOTOOLCHAIN=local")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The whole group: a shim (pyenv's pip is a shell script) leaves its
	// own children holding the output pipe otherwise.
	c.Cancel = func() error { return unix.Kill(-c.Process.Pid, unix.SIGKILL) }
	c.WaitDelay = 100 * time.Millisecond
	var out bytes.Buffer
	c.Stdout = &out
	if c.Run() != nil {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	return lines
}

// cachePlan is what a session makes of the caches it was given.
type cachePlan struct {
	// Caches are every cache, in the order given.
	Caches []plan.Cache
}

// Overlays are the caches to mount an overlay on.
func (p cachePlan) Overlays() []plan.Cache { return p.layer(plan.CacheOverlay) }

// Direct are the caches to make writable roots.
func (p cachePlan) Direct() []plan.Cache { return p.layer(plan.CacheDirect) }

func (p cachePlan) layer(l string) []plan.Cache {
	var out []plan.Cache
	for _, c := range p.Caches {
		if c.Layer == l && c.Within == "" {
			out = append(out, c)
		}
	}
	return out
}

// Refuse makes the cache at path read-only, and those within it, for
// the reason why.
func (p cachePlan) Refuse(path, why string) {
	for i, c := range p.Caches {
		if c.Path == path || c.Within == path {
			p.Caches[i].Layer, p.Caches[i].Why = plan.CacheReadOnly, why
		}
	}
}

// planCaches decides how the shell of a session under p sees each found
// cache, given the canonical writable roots, caches_writable (writable),
// why there is no mount layer (mountsWhy, "" where there is one) and the
// private paths the session must never see writable (its own folder, the
// config files). A cache in a writable root is as writable as the root;
// one holding a root or a private path stays read-only, since an overlay
// would hide the root's real writes or let the session rewrite its
// policy. Read-only mode keeps every cache read-only; danger-full-access
// leaves them writable.
func planCaches(found []foundCache, p policy.Policy, roots, private []string, writable, mountsWhy string) cachePlan {
	var cp cachePlan
	for _, f := range found {
		c, err := filepath.EvalSymlinks(f.Path)
		if err != nil || !filepath.IsAbs(c) {
			continue
		}
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue
		}
		if slices.ContainsFunc(cp.Caches, func(o plan.Cache) bool { return o.Path == c }) {
			continue
		}
		cp.Caches = append(cp.Caches, plan.Cache{Path: c, Source: f.Source})
	}
	// Outermost first, so that a cache's outer one is decided before it.
	order := slices.Clone(cp.Caches)
	slices.SortStableFunc(order, func(a, b plan.Cache) int { return len(a.Path) - len(b.Path) })
	for _, o := range order {
		i := slices.IndexFunc(cp.Caches, func(c plan.Cache) bool { return c.Path == o.Path })
		c := &cp.Caches[i]
		c.Layer, c.Why = cacheLayer(c.Path, p, roots, private, writable, mountsWhy)
		// The outermost cache holding this one whose layer is mounted
		// covers it; a read-only one (too broad, say) covers nothing.
		for _, outer := range order {
			if outer.Path == c.Path || !sandbox.Beneath(outer.Path, c.Path) {
				continue
			}
			j := slices.IndexFunc(cp.Caches, func(x plan.Cache) bool { return x.Path == outer.Path })
			if o := cp.Caches[j]; o.Within == "" && (o.Layer == plan.CacheOverlay || o.Layer == plan.CacheDirect) {
				c.Layer, c.Within, c.Why = o.Layer, o.Path, "covered by the layer of "+o.Path
				break
			}
		}
	}
	return cp
}

// systemFolders are what no cache may hold: a session that rewrote them
// in its own view (the user database, the loader's configuration, the
// programs) would change what every dsh-fs call inside takes for the
// system. A variable the harness set wrongly (GOCACHE=/) names one.
var systemFolders = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr"}

// cacheLayer is the layer of the one cache c, and why.
func cacheLayer(c string, p policy.Policy, roots, private []string, writable, mountsWhy string) (string, string) {
	for _, r := range roots {
		if sandbox.Beneath(r, c) {
			return plan.CacheInRoot, "in the writable root " + r
		}
	}
	switch p.Mode {
	case policy.ReadOnly:
		return plan.CacheReadOnly, "read-only mode"
	case policy.DangerFullAccess:
		return plan.CacheDirect, "danger-full-access mode"
	}
	for _, r := range roots {
		if sandbox.Beneath(c, r) {
			return plan.CacheReadOnly, "it holds the writable root " + r
		}
	}
	for _, q := range private {
		if sandbox.Beneath(c, q) {
			return plan.CacheReadOnly, "it holds " + q + ", which the session must not rewrite"
		}
	}
	if c == p.Home {
		return plan.CacheReadOnly, "the home folder is too broad for a cache"
	}
	for _, q := range systemFolders {
		if sandbox.Beneath(c, q) {
			return plan.CacheReadOnly, "it holds " + q + ", too broad for a cache"
		}
	}
	switch {
	case writable == policy.CachesOff:
		return plan.CacheReadOnly, "caches_writable: off"
	case writable == policy.CachesDirect:
		return plan.CacheDirect, "caches_writable: direct: the session's writes stay, and can change what the person's builds use"
	case mountsWhy != "":
		return plan.CacheReadOnly, "no copy-on-write layer: " + mountsWhy
	}
	return plan.CacheOverlay, ""
}
