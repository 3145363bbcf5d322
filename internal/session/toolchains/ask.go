package toolchains

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
	"time"
)

// askAll asks the toolchains on the person's $PATH, with env
// (exec's own), where their caches are, all at once and each for a few
// seconds at most: go env, npm's and pip's cache (their variable, else
// the tool), cargo's registry and git folders, and $XDG_CACHE_HOME. Each
// tool runs in / with no input, in a process group killed at the
// deadline; what a missing or failing tool would have said is left out.
// The list is in that order, without duplicates; complete says every
// tool answered, so the answer may be kept (keyOf).
func askAll(env []string) (found []Cache, complete bool) {
	return newEnviron(env).caches()
}

// caches is askAll in t.
func (t environ) caches() (found []Cache, complete bool) {
	slots := make([][]Cache, 5)
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
					slots[slot] = append(slots[slot], Cache{Path: lines[i], Source: src})
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
			slots[1] = []Cache{{c, "npm_config_cache"}}
		case names("cache", t.npmConfigs(n)):
			ask(1, []string{n, "config", "get", "cache"}, "npm config get cache")
		default:
			slots[1] = []Cache{{t.under(t.home, ".npm"), "npm (its default)"}}
		}
	}
	if pip := t.pip(); pip != "" {
		switch c := t.get("PIP_CACHE_DIR"); {
		case c != "":
			slots[2] = []Cache{{c, "PIP_CACHE_DIR"}}
		case names("cache-dir", t.pipConfigs()):
			ask(2, []string{pip, "cache", "dir"}, "pip cache dir")
		default:
			slots[2] = []Cache{{t.under(t.xdgCache, "pip"), "pip (its default)"}}
		}
	}
	if t.lookPath("cargo") != "" {
		cargo, src := t.get("CARGO_HOME"), "CARGO_HOME"
		if !filepath.IsAbs(cargo) {
			cargo, src = t.under(t.home, ".cargo"), "cargo (its default ~/.cargo)"
		}
		slots[3] = []Cache{{t.under(cargo, "registry"), src}, {t.under(cargo, "git"), src}}
	}
	slots[4] = []Cache{{t.xdgCache, "XDG_CACHE_HOME (~/.cache)"}}
	wg.Wait()
	for _, s := range slots {
		for _, c := range s {
			if c.Path != "" && !slices.ContainsFunc(found, func(o Cache) bool { return o.Path == c.Path }) {
				found = append(found, c)
			}
		}
	}
	return found, !slices.Contains(failed, true)
}

// environ is what askAll and keyOf read of the person's environment,
// and where and how long they look.
type environ struct {
	env                       []string
	home, xdgCache, xdgConfig string
	// askFor bounds each toolchain asked for its caches: a tool that
	// hangs must not hang exec.
	askFor time.Duration
	// npmGlobal and pipGlobal are the system-wide config files of npm
	// and pip, where no variable names them.
	npmGlobal, pipGlobal []string
}

// newEnviron is the environ of exec's environment env.
func newEnviron(env []string) environ {
	t := environ{env: env, askFor: 3 * time.Second,
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
func (t environ) get(k string) string {
	for i := len(t.env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(t.env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// under is rel in dir; "" where dir is not an absolute path.
func (environ) under(dir, rel string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, rel)
}

// lookPath is the program name on $PATH; "" for none.
func (t environ) lookPath(name string) string {
	for _, d := range filepath.SplitList(t.get("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && filepath.IsAbs(p) {
			return p
		}
	}
	return ""
}

// pip is pip, else pip3, on $PATH.
func (t environ) pip() string {
	if p := t.lookPath("pip"); p != "" {
		return p
	}
	return t.lookPath("pip3")
}

// npmConfigs are the files that can name npm's cache, for the npm at
// npm: the user's, the one a variable names, the global one of its
// prefix and the system's; "/.npmrc" is the project's of /, where npm
// is asked.
func (t environ) npmConfigs(npm string) []string {
	return append([]string{t.under(t.home, ".npmrc"), t.get("NPM_CONFIG_USERCONFIG"), t.get("npm_config_userconfig"),
		filepath.Join(filepath.Dir(filepath.Dir(npm)), "etc", "npmrc"), "/.npmrc"}, t.npmGlobal...)
}

// pipConfigs are the files that can name pip's cache.
func (t environ) pipConfigs() []string {
	return append([]string{t.get("PIP_CONFIG_FILE"), t.under(t.xdgConfig, "pip/pip.conf"), t.under(t.home, ".pip/pip.conf"),
		t.under(t.get("VIRTUAL_ENV"), "pip.conf")}, t.pipGlobal...)
}

// goConfigs are the files that can move Go's caches: the user's go env
// file ($GOENV, else in the config folder) and the toolchain's go.env,
// beside the bin folder of the go at goBin (symlinks resolved).
func (t environ) goConfigs(goBin string) []string {
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
func (t environ) askTool(argv []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), t.askFor)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir = "/"
	c.Env = append(slices.Clip(t.env), "GOTOOLCHAIN=local")
	killGroupOnCancel(c)
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
