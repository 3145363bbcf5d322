package toolchains

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTool writes an executable shell script name into dir.
func writeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestAskAll: each toolchain is asked, or its default taken where no
// config could have moved it; a tool that hangs (and leaves a child
// holding its output) costs exec its deadline, no more, and adds nothing.
func TestAskAll(t *testing.T) {
	// No system-wide config of the machine's.
	askAll := func(env []string) ([]Cache, bool) {
		te := newEnviron(env)
		te.npmGlobal, te.pipGlobal = nil, nil
		return te.caches()
	}
	bin, home := t.TempDir(), t.TempDir()
	writeTool(t, bin, "go", `echo /go/cache; echo /go/mod`)
	writeTool(t, bin, "npm", `echo /npm/asked`)
	writeTool(t, bin, "pip", `echo /pip/asked`)
	writeTool(t, bin, "cargo", `exit 0`)
	env := []string{"PATH=" + bin, "HOME=" + home}
	paths := func(found []Cache, complete bool) string {
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
	if got := paths(askAll(env)); got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	// A config that names no cache changes nothing.
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=https://example.com/\n"), 0o644)
	if got := paths(askAll(env)); got != want {
		t.Errorf("an npmrc without cache:\n got %s\nwant %s", got, want)
	}
	// A config that names the cache: the tool is asked.
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=https://example.com/\ncache = /npm/asked\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".config", "pip"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "pip", "pip.conf"), []byte("[global]\ncache_dir=/pip/asked\n"), 0o644)
	got := paths(askAll(append(env, "CARGO_HOME=/cargo", "XDG_CACHE_HOME=/xdg")))
	for _, w := range []string{"/npm/asked=npm config get cache", "/pip/asked=pip cache dir", "/cargo/registry=CARGO_HOME", "/xdg=XDG_CACHE_HOME"} {
		if !strings.Contains(got, w) {
			t.Errorf("asked: no %s in %s", w, got)
		}
	}
	// The variables win, without asking.
	got = paths(askAll(append(env, "npm_config_cache=/npm/env", "PIP_CACHE_DIR=/pip/env")))
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
		found    []Cache
		complete bool
	}
	start, done := time.Now(), make(chan answer, 1)
	go func() {
		te := newEnviron([]string{"PATH=" + hang, "HOME=" + home})
		te.askFor = deadline
		found, complete := te.caches()
		done <- answer{found, complete}
	}()
	var a answer
	// A hang guard, not a speed claim: askAll that waited for the
	// tool or its child would wait their 300 s.
	select {
	case a = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("a hanging tool still holds askAll after 60 s (its deadline is %v)", deadline)
	}
	if d := time.Since(start); d < deadline {
		t.Errorf("askAll gave up on the tool after %v, before its deadline %v", d, deadline)
	}
	found, complete := a.found, a.complete
	if got := paths(found, true); strings.Contains(got, "go env") || complete {
		t.Errorf("a hanging tool added %s, or the answer is called complete (%v)", got, complete)
	}
	// A deadline already past: the go that answers at once is not even
	// started, and the answer is incomplete.
	past := newEnviron(env)
	past.askFor = 0
	if found, complete := past.caches(); complete || strings.Contains(paths(found, true), "go env") {
		t.Errorf("with the deadline past: %s, complete %v; want no go env and incomplete", paths(found, true), complete)
	}
	// No tool on $PATH: only ~/.cache.
	if got := paths(askAll([]string{"PATH=" + t.TempDir(), "HOME=" + home})); got != home+"/.cache=XDG_CACHE_HOME (~/.cache)" {
		t.Errorf("no tools: %s", got)
	}
}

// TestKey: the key of askAll's answer changes with what
// can change the answer (a toolchain's binary, a variable, a config file
// appearing) and with nothing else.
func TestKey(t *testing.T) {
	bin, home := t.TempDir(), t.TempDir()
	writeTool(t, bin, "go", `echo /go/cache; echo /go/mod`)
	env := []string{"PATH=" + bin, "HOME=" + home, "TERM=xterm"}
	key := keyOf(env)
	if keyOf(env) != key {
		t.Fatal("the key of the same environment changed")
	}
	if keyOf(append(env, "TERM=dumb", "LANG=C")) != key {
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
		got := keyOf(c.change())
		if got == key {
			t.Errorf("%s: the key stayed the same", c.what)
		}
		key = keyOf(env)
	}
}
