package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// How the shell of a session sees a cache (Cache.Layer).
const (
	// CacheOverlay: readable and writable through a copy-on-write
	// overlay; what the session writes is discarded at its end.
	CacheOverlay = "overlay"
	// CacheDirect: a writable root of the session's kernel layer, as
	// the trusted caches_writable: direct asks; the session's writes
	// stay, and can change what the person's builds use.
	CacheDirect = "direct"
	// CacheInRoot: it lies in a writable root, and is as writable as
	// the root is.
	CacheInRoot = "writable-root"
	// CacheReadOnly: left as it is, read-only for the shell; Why says
	// why.
	CacheReadOnly = "read-only"
)

// Settings of caches_writable (docs/design.md §2.2), narrowest first.
const (
	CachesOff     = "off"
	CachesOverlay = "overlay"
	CachesDirect  = "direct"
)

// CachesWritableWider reports whether the caches_writable value a lets
// the session write more than b does.
func CachesWritableWider(a, b string) bool {
	rank := func(v string) int { return slices.Index([]string{CachesOff, CachesOverlay, CachesDirect}, v) }
	return rank(a) > rank(b)
}

// FoundCache is a cache folder as a toolchain (or the config) names it.
type FoundCache struct {
	Path string `json:"path"`
	// Source says who named it: "go env GOCACHE", "npm config get
	// cache", "CARGO_HOME", "XDG_CACHE_HOME", "caches" (the config).
	Source string `json:"source"`
}

// Cache is one toolchain cache of a session and how its shell sees it.
type Cache struct {
	// Path is the canonical folder.
	Path   string `json:"path"`
	Source string `json:"source"`
	// Layer is CacheOverlay, CacheDirect, CacheInRoot or CacheReadOnly.
	Layer string `json:"layer"`
	// Within names the cache that holds this one, whose layer covers
	// it; "" for none.
	Within string `json:"within,omitempty"`
	// Why says why a cache is read-only, or what the layer means.
	Why string `json:"why,omitempty"`
}

// Writable reports whether the shell may write the cache.
func (c Cache) Writable() bool { return c.Layer != CacheReadOnly }

// cacheToolTimeout bounds each toolchain asked for its caches: a tool
// that hangs must not hang exec. A variable only so tests can lower it.
var cacheToolTimeout = 3 * time.Second

// FindCaches asks the toolchains on the person's $PATH, with the
// person's environment env (KEY=VALUE, exec's own), where their caches
// are, all at once and each for at most a few seconds: `go env GOCACHE
// GOMODCACHE`; npm's cache ($npm_config_cache, else `npm config get
// cache` where an npmrc could have moved it from ~/.npm); pip's
// ($PIP_CACHE_DIR, else `pip cache dir` where a pip.conf could have
// moved it from $XDG_CACHE_HOME/pip); cargo's registry and git folders
// under $CARGO_HOME (~/.cargo); and $XDG_CACHE_HOME (~/.cache). A tool
// is run in / (no go.mod there asks for another toolchain), with no
// standard input, in a process group of its own that is killed at the
// deadline. What a tool that is missing, fails or names nothing would
// have said is left out; so is a folder that does not exist (planCaches
// checks). The list is in this order, without duplicates.
func FindCaches(env []string) []FoundCache {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	under := func(dir, rel string) string {
		if dir == "" || !filepath.IsAbs(dir) {
			return ""
		}
		return filepath.Join(dir, rel)
	}
	xdgCache := get("XDG_CACHE_HOME")
	if !filepath.IsAbs(xdgCache) {
		xdgCache = under(home, ".cache")
	}
	lookPath := func(name string) string {
		for _, d := range filepath.SplitList(get("PATH")) {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && filepath.IsAbs(p) {
				return p
			}
		}
		return ""
	}
	// A tool is asked only where one of its config files names its
	// cache: starting node or python costs exec half a second each.
	names := func(key string, paths ...string) bool {
		return slices.ContainsFunc(paths, func(p string) bool { return p != "" && configNames(p, key) })
	}
	slots := make([][]FoundCache, 5)
	var wg sync.WaitGroup
	ask := func(slot int, argv []string, sources ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines := askTool(argv, env)
			for i, src := range sources {
				if i < len(lines) && filepath.IsAbs(lines[i]) {
					slots[slot] = append(slots[slot], FoundCache{Path: lines[i], Source: src})
				}
			}
		}()
	}
	if g := lookPath("go"); g != "" {
		ask(0, []string{g, "env", "GOCACHE", "GOMODCACHE"}, "go env GOCACHE", "go env GOMODCACHE")
	}
	if n := lookPath("npm"); n != "" {
		switch c := get("npm_config_cache"); {
		case c != "":
			slots[1] = []FoundCache{{c, "npm_config_cache"}}
		case names("cache", append([]string{under(home, ".npmrc"), get("NPM_CONFIG_USERCONFIG"), get("npm_config_userconfig"),
			filepath.Join(filepath.Dir(filepath.Dir(n)), "etc", "npmrc")}, npmGlobalConfigs...)...):
			ask(1, []string{n, "config", "get", "cache"}, "npm config get cache")
		default:
			slots[1] = []FoundCache{{under(home, ".npm"), "npm (its default)"}}
		}
	}
	pip := lookPath("pip")
	if pip == "" {
		pip = lookPath("pip3")
	}
	if pip != "" {
		xdgConfig := get("XDG_CONFIG_HOME")
		if !filepath.IsAbs(xdgConfig) {
			xdgConfig = under(home, ".config")
		}
		switch c := get("PIP_CACHE_DIR"); {
		case c != "":
			slots[2] = []FoundCache{{c, "PIP_CACHE_DIR"}}
		case names("cache-dir", append([]string{get("PIP_CONFIG_FILE"), under(xdgConfig, "pip/pip.conf"), under(home, ".pip/pip.conf")},
			pipGlobalConfigs...)...):
			ask(2, []string{pip, "cache", "dir"}, "pip cache dir")
		default:
			slots[2] = []FoundCache{{under(xdgCache, "pip"), "pip (its default)"}}
		}
	}
	if lookPath("cargo") != "" {
		cargo, src := get("CARGO_HOME"), "CARGO_HOME"
		if !filepath.IsAbs(cargo) {
			cargo, src = under(home, ".cargo"), "cargo (its default ~/.cargo)"
		}
		slots[3] = []FoundCache{{under(cargo, "registry"), src}, {under(cargo, "git"), src}}
	}
	slots[4] = []FoundCache{{xdgCache, "XDG_CACHE_HOME (~/.cache)"}}
	wg.Wait()
	var out []FoundCache
	for _, s := range slots {
		for _, c := range s {
			if c.Path != "" && !slices.ContainsFunc(out, func(o FoundCache) bool { return o.Path == c.Path }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// The system-wide config files of npm and pip, where no variable names
// them; variables only so tests can replace them.
var (
	npmGlobalConfigs = []string{"/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"}
	pipGlobalConfigs = []string{"/etc/pip.conf", "/etc/xdg/pip/pip.conf"}
)

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

// askTool runs argv with env for at most cacheToolTimeout and returns
// the lines of its standard output; nil when it fails or times out.
func askTool(argv, env []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), cacheToolTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir = "/"
	c.Env = append(slices.Clip(env), "GOTOOLCHAIN=local")
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

// CachePlan is what a session makes of the caches it was given.
type CachePlan struct {
	// Caches are every cache, in the order given.
	Caches []Cache
}

// Overlays are the caches to mount an overlay on.
func (p CachePlan) Overlays() []Cache { return p.layer(CacheOverlay) }

// Direct are the caches to make writable roots.
func (p CachePlan) Direct() []Cache { return p.layer(CacheDirect) }

func (p CachePlan) layer(l string) []Cache {
	var out []Cache
	for _, c := range p.Caches {
		if c.Layer == l && c.Within == "" {
			out = append(out, c)
		}
	}
	return out
}

// Refuse makes the cache at path read-only, and those within it, for
// the reason why.
func (p CachePlan) Refuse(path, why string) {
	for i, c := range p.Caches {
		if c.Path == path || c.Within == path {
			p.Caches[i].Layer, p.Caches[i].Why = CacheReadOnly, why
		}
	}
}

// PlanCaches decides how the shell of a session under p, whose kernel
// layer has the canonical writable roots roots, sees each found cache,
// with caches_writable set to writable: mountsWhy is "" where the
// session has a mount layer, else why not; private are the canonical
// paths the session must never see through a writable layer (the
// session's own folder, the trusted and loaded config files).
//
// A found folder that does not exist is left out; each is canonical and
// listed once. A cache in another is covered by the outer one's layer
// (Within). A cache in a writable root is as writable as the root. One
// that holds a writable root, or a private path, stays read-only: an
// overlay over it would hide the root's real writes from the person, or
// let the session rewrite its own policy. In read-only mode every cache
// stays read-only; in danger-full-access, writable as everything is.
func PlanCaches(found []FoundCache, p Policy, roots, private []string, writable, mountsWhy string) CachePlan {
	var plan CachePlan
	for _, f := range found {
		c, err := filepath.EvalSymlinks(f.Path)
		if err != nil || !filepath.IsAbs(c) {
			continue
		}
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue
		}
		if slices.ContainsFunc(plan.Caches, func(o Cache) bool { return o.Path == c }) {
			continue
		}
		plan.Caches = append(plan.Caches, Cache{Path: c, Source: f.Source})
	}
	// Outermost first, so that a cache's outer one is decided before it.
	order := slices.Clone(plan.Caches)
	slices.SortStableFunc(order, func(a, b Cache) int { return len(a.Path) - len(b.Path) })
	for _, o := range order {
		i := slices.IndexFunc(plan.Caches, func(c Cache) bool { return c.Path == o.Path })
		c := &plan.Caches[i]
		c.Layer, c.Why = cacheLayer(c.Path, p, roots, private, writable, mountsWhy)
		// The outermost cache holding this one whose layer is mounted
		// covers it; a read-only one (too broad, say) covers nothing.
		for _, outer := range order {
			if outer.Path == c.Path || !Beneath(outer.Path, c.Path) {
				continue
			}
			j := slices.IndexFunc(plan.Caches, func(x Cache) bool { return x.Path == outer.Path })
			if o := plan.Caches[j]; o.Within == "" && (o.Layer == CacheOverlay || o.Layer == CacheDirect) {
				c.Layer, c.Within, c.Why = o.Layer, o.Path, "covered by the layer of "+o.Path
				break
			}
		}
	}
	return plan
}

// systemFolders are what no cache may hold: a session that rewrote them
// in its own view (the user database, the loader's configuration, the
// programs) would change what every dsh-fs call inside takes for the
// system. A variable the harness set wrongly (GOCACHE=/) names one.
var systemFolders = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr"}

// cacheLayer is the layer of the one cache c, and why.
func cacheLayer(c string, p Policy, roots, private []string, writable, mountsWhy string) (string, string) {
	for _, r := range roots {
		if Beneath(r, c) {
			return CacheInRoot, "in the writable root " + r
		}
	}
	switch p.Mode {
	case ReadOnly:
		return CacheReadOnly, "read-only mode"
	case DangerFullAccess:
		return CacheDirect, "danger-full-access mode"
	}
	for _, r := range roots {
		if Beneath(c, r) {
			return CacheReadOnly, "it holds the writable root " + r
		}
	}
	for _, q := range private {
		if Beneath(c, q) {
			return CacheReadOnly, "it holds " + q + ", which the session must not rewrite"
		}
	}
	if c == p.Home {
		return CacheReadOnly, "the home folder is too broad for a cache"
	}
	for _, q := range systemFolders {
		if Beneath(c, q) {
			return CacheReadOnly, "it holds " + q + ", too broad for a cache"
		}
	}
	switch {
	case writable == CachesOff:
		return CacheReadOnly, "caches_writable: off"
	case writable == CachesDirect:
		return CacheDirect, "caches_writable: direct: the session's writes stay, and can change what the person's builds use"
	case mountsWhy != "":
		return CacheReadOnly, "no copy-on-write layer: " + mountsWhy
	}
	return CacheOverlay, ""
}
