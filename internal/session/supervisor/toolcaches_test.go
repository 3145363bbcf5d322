package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestPlanCaches: how a session's shell sees each cache found, by where
// it lies and what the policy says.
func TestPlanCaches(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"ws/cache", "gocache", "gomod", "home/.cache/go-build", "holds/ws2", "run/session", "etc"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(dir, "gocache"), filepath.Join(dir, "link"))
	at := func(p string) string { return filepath.Join(dir, p) }
	found := []foundCache{
		{at("gocache"), "go env GOCACHE"},
		{at("link"), "a symlink to it"},
		{at("gomod"), "go env GOMODCACHE"},
		{at("missing"), "npm"},
		{at("ws/cache"), "caches"},
		{at("home/.cache/go-build"), "inner"},
		{at("home/.cache"), "XDG_CACHE_HOME"},
		{at("holds"), "caches"},
		{at("run"), "caches"},
		{"/", "GOCACHE=/"},
		{"/etc", "GOMODCACHE=/etc"},
		{at("home"), "the home folder"},
	}
	roots := []string{at("ws"), at("holds/ws2")}
	private := []string{at("run/session"), at("etc/config.yaml")}
	ww := policy.Policy{Mode: policy.WorkspaceWrite, Home: at("home")}
	type want struct{ layer, within, why string }
	for _, tc := range []struct {
		name      string
		p         policy.Policy
		writable  string
		mountsWhy string
		want      map[string]want
	}{
		{name: "overlay", p: ww, writable: policy.CachesOverlay, want: map[string]want{
			"gocache":              {plan.CacheOverlay, "", ""},
			"gomod":                {plan.CacheOverlay, "", ""},
			"ws/cache":             {plan.CacheInRoot, "", "in the writable root"},
			"home/.cache":          {plan.CacheOverlay, "", ""},
			"home/.cache/go-build": {plan.CacheOverlay, "home/.cache", "covered by the layer of"},
			"holds":                {plan.CacheReadOnly, "", "it holds the writable root"},
			"run":                  {plan.CacheReadOnly, "", "which the session must not rewrite"},
			"/":                    {plan.CacheReadOnly, "", "it holds "},
			"/etc":                 {plan.CacheReadOnly, "", "it holds /etc, too broad for a cache"},
			"home":                 {plan.CacheReadOnly, "", "the home folder is too broad"},
		}},
		{name: "no mount layer", p: ww, writable: policy.CachesOverlay, mountsWhy: "not root", want: map[string]want{
			"gocache":              {plan.CacheReadOnly, "", "no copy-on-write layer: not root"},
			"home/.cache/go-build": {plan.CacheReadOnly, "", "no copy-on-write layer"},
			"ws/cache":             {plan.CacheInRoot, "", ""},
		}},
		{name: "direct", p: ww, writable: policy.CachesDirect, want: map[string]want{
			"gocache":              {plan.CacheDirect, "", "caches_writable: direct"},
			"home/.cache/go-build": {plan.CacheDirect, "home/.cache", ""},
			"holds":                {plan.CacheReadOnly, "", "it holds the writable root"},
		}},
		{name: "off", p: ww, writable: policy.CachesOff, want: map[string]want{
			"gocache": {plan.CacheReadOnly, "", "caches_writable: off"},
		}},
		{name: "read-only mode", p: policy.Policy{Mode: policy.ReadOnly}, writable: policy.CachesOverlay, want: map[string]want{
			"gocache": {plan.CacheReadOnly, "", "read-only mode"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := planCaches(found, tc.p, roots, private, tc.writable, tc.mountsWhy)
			got := map[string]plan.Cache{}
			for _, c := range cp.Caches {
				rel, _ := filepath.Rel(dir, c.Path)
				if !strings.HasPrefix(c.Path, dir) {
					rel = c.Path
				}
				if _, dup := got[rel]; dup {
					t.Errorf("%s listed twice", rel)
				}
				got[rel] = c
			}
			if _, ok := got["missing"]; ok {
				t.Errorf("a missing folder is listed")
			}
			if _, ok := got["link"]; ok {
				t.Errorf("a symlink is listed by its own name")
			}
			if len(got) != 10 {
				t.Errorf("%d caches, want 10: %v", len(got), cp.Caches)
			}
			for rel, w := range tc.want {
				c := got[rel]
				within := ""
				if w.within != "" {
					within = at(w.within)
				}
				if c.Layer != w.layer || c.Within != within || !strings.Contains(c.Why, w.why) {
					t.Errorf("%s: %+v, want layer %s within %q why ~%q", rel, c, w.layer, within, w.why)
				}
			}
			for _, o := range cp.Overlays() {
				if o.Within != "" || o.Layer != plan.CacheOverlay {
					t.Errorf("overlay of %+v", o)
				}
			}
		})
	}
}

// writeTool writes an executable shell script name into dir.
func writeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFindCaches: each toolchain is asked, or its default taken where no
// config could have moved it; a tool that hangs (and leaves a child
// holding its output) costs exec its deadline, no more, and adds nothing.
func TestFindCaches(t *testing.T) {
	// No system-wide config of the machine's.
	toolchainCaches := func(env []string) ([]foundCache, bool) {
		te := newToolchainEnv(env)
		te.npmGlobal, te.pipGlobal = nil, nil
		return te.caches()
	}
	bin, home := t.TempDir(), t.TempDir()
	writeTool(t, bin, "go", `echo /go/cache; echo /go/mod`)
	writeTool(t, bin, "npm", `echo /npm/asked`)
	writeTool(t, bin, "pip", `echo /pip/asked`)
	writeTool(t, bin, "cargo", `exit 0`)
	env := []string{"PATH=" + bin, "HOME=" + home}
	paths := func(found []foundCache, complete bool) string {
		if !complete {
			return "incomplete"
		}
		var out []string
		for _, f := range found {
			out = append(out, f.Path+"="+f.Source)
		}
		return strings.Join(out, " ")
	}
	want := "/go/cache=go env GOCACHE /go/mod=go env GOMODCACHE " + home + "/.npm=npm (its default) " +
		home + "/.cache/pip=pip (its default) " + home + "/.cargo/registry=cargo (its default ~/.cargo) " +
		home + "/.cargo/git=cargo (its default ~/.cargo) " + home + "/.cache=XDG_CACHE_HOME (~/.cache)"
	if got := paths(toolchainCaches(env)); got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	// A config that names no cache changes nothing.
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=https://example.com/\n"), 0o644)
	if got := paths(toolchainCaches(env)); got != want {
		t.Errorf("an npmrc without cache:\n got %s\nwant %s", got, want)
	}
	// A config that names the cache: the tool is asked.
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=https://example.com/\ncache = /npm/asked\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".config", "pip"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "pip", "pip.conf"), []byte("[global]\ncache_dir=/pip/asked\n"), 0o644)
	got := paths(toolchainCaches(append(env, "CARGO_HOME=/cargo", "XDG_CACHE_HOME=/xdg")))
	for _, w := range []string{"/npm/asked=npm config get cache", "/pip/asked=pip cache dir", "/cargo/registry=CARGO_HOME", "/xdg=XDG_CACHE_HOME"} {
		if !strings.Contains(got, w) {
			t.Errorf("asked: no %s in %s", w, got)
		}
	}
	// The variables win, without asking.
	got = paths(toolchainCaches(append(env, "npm_config_cache=/npm/env", "PIP_CACHE_DIR=/pip/env")))
	if !strings.Contains(got, "/npm/env=npm_config_cache") || !strings.Contains(got, "/pip/env=PIP_CACHE_DIR") {
		t.Errorf("variables: %s", got)
	}
	// A hanging go, whose child holds the output pipe: the deadline, a
	// short one here, is what ends it. The tools above answer at once
	// but had the real deadline, as a loaded machine may take a while
	// to start even a shell script.
	const deadline = 300 * time.Millisecond
	hang := t.TempDir()
	writeTool(t, hang, "go", `/bin/sleep 300 & /bin/sleep 300`)
	type answer struct {
		found    []foundCache
		complete bool
	}
	start, done := time.Now(), make(chan answer, 1)
	go func() {
		te := newToolchainEnv([]string{"PATH=" + hang, "HOME=" + home})
		te.askFor = deadline
		found, complete := te.caches()
		done <- answer{found, complete}
	}()
	var a answer
	// A hang guard, not a speed claim: toolchainCaches that waited for the
	// tool or its child would wait their 300 s.
	select {
	case a = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("a hanging tool still holds toolchainCaches after 60 s (its deadline is %v)", deadline)
	}
	if d := time.Since(start); d < deadline {
		t.Errorf("toolchainCaches gave up on the tool after %v, before its deadline %v", d, deadline)
	}
	found, complete := a.found, a.complete
	if got := paths(found, true); strings.Contains(got, "go env") || complete {
		t.Errorf("a hanging tool added %s, or the answer is called complete (%v)", got, complete)
	}
	// A deadline already past: the go that answers at once is not even
	// started, and the answer is incomplete.
	past := newToolchainEnv(env)
	past.askFor = 0
	if found, complete := past.caches(); complete || strings.Contains(paths(found, true), "go env") {
		t.Errorf("with the deadline past: %s, complete %v; want no go env and incomplete", paths(found, true), complete)
	}
	// No tool on $PATH: only ~/.cache.
	if got := paths(toolchainCaches([]string{"PATH=" + t.TempDir(), "HOME=" + home})); got != home+"/.cache=XDG_CACHE_HOME (~/.cache)" {
		t.Errorf("no tools: %s", got)
	}
}

// TestToolchainsKey: the key of toolchainCaches's answer changes with what
// can change the answer (a toolchain's binary, a variable, a config file
// appearing) and with nothing else.
func TestToolchainsKey(t *testing.T) {
	bin, home := t.TempDir(), t.TempDir()
	writeTool(t, bin, "go", `echo /go/cache; echo /go/mod`)
	env := []string{"PATH=" + bin, "HOME=" + home, "TERM=xterm"}
	key := toolchainsKey(env)
	if toolchainsKey(env) != key {
		t.Fatal("the key of the same environment changed")
	}
	if toolchainsKey(append(env, "TERM=dumb", "LANG=C")) != key {
		t.Error("a variable no toolchain reads for its cache changed the key")
	}
	for _, c := range []struct {
		what   string
		change func() []string
	}{
		{"GOCACHE set", func() []string { return append(env, "GOCACHE=/elsewhere") }},
		{"HOME changed", func() []string { return append(env, "HOME="+t.TempDir()) }},
		{"the go env file written", func() []string {
			os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755)
			os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOCACHE=/elsewhere\n"), 0o644)
			return env
		}},
		{"the go binary replaced", func() []string { writeTool(t, bin, "go", `echo /other; echo /mod`); return env }},
		{"an npm appearing on $PATH", func() []string { writeTool(t, bin, "npm", `echo /npm`); return env }},
		{"an npmrc appearing", func() []string {
			os.WriteFile(filepath.Join(home, ".npmrc"), []byte("cache=/npm\n"), 0o644)
			return env
		}},
	} {
		got := toolchainsKey(c.change())
		if got == key {
			t.Errorf("%s: the key stayed the same", c.what)
		}
		key = toolchainsKey(env)
	}
}
