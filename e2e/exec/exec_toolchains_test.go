//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecToolchainsAskedOnce (issue 38): the toolchains are asked where
// their caches are once, not at every start. A fake go first on $PATH
// counts its runs: a second session with the same toolchains,
// variables and config files runs it no more, and still layers the
// caches it named; a go replaced, or a variable that can move a cache
// changed, asks again; caches_from_toolchains: false asks nothing.
// Before: every session ran go env (the count grew with every start).
func TestExecToolchainsAskedOnce(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the root session's test: its runtime folder is /run/dsh-fs")
	}
	dir := t.TempDir()
	bin, ws, home := filepath.Join(dir, "bin"), filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	gocache, count := filepath.Join(home, "gocache"), filepath.Join(dir, "count")
	harness.WriteTree(t, dir, map[string]string{"ws/.keep": "", "home/gocache/README": "the person's\n", "home/gomod/.keep": ""})
	writeGo := func(extra string) {
		script := "#!/bin/sh\necho run >>" + count + "\necho " + gocache + "\necho " + filepath.Join(home, "gomod") + "\n" + extra
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeGo("")
	env := execEnv(t, ws, "HOME="+home, "PATH="+bin+":"+filepath.Dir(harness.Bin(t))+":/usr/bin:/bin")
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "run\n")
	}
	session := func(what string, env []string, wantRuns int) string {
		t.Helper()
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), `echo "prog=$GOCACHEPROG"; echo x > "`+gocache+`/by-session" && dsh-fs policy --verbose`)
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, code, stdout, stderr)
		}
		if got := runs(); got != wantRuns {
			t.Errorf("%s: go ran %d times in all, want %d", what, got, wantRuns)
		}
		return stdout
	}
	session("the first session", env, 1)
	out := session("a second session", env, 1)
	// The kept answer is the toolchain's: its cache is layered.
	if !strings.Contains(out, `"path":"`+gocache+`","source":"go env GOCACHE","layer":"overlay"`) {
		t.Errorf("the second session did not layer the kept GOCACHE %s:\n%s", gocache, out)
	}
	wantAbsent(t, filepath.Join(gocache, "by-session"))
	// Its go commands use the build cache through the cache program,
	// where the overlay would copy whole entries up as go marks them
	// used; as root, whose overlay copies up only their metadata
	// (metacopy), directly.
	prog := harness.Bin(t) + " __gocacheprog"
	if _, err := os.Stat("/sys/module/overlay/parameters/metacopy"); err == nil && os.Geteuid() == 0 {
		prog = ""
	}
	if !strings.Contains(out, "prog="+prog+"\n") {
		t.Errorf("the session's GOCACHEPROG is not %q:\n%s", prog, out)
	}
	writeGo("# replaced\n")
	session("go replaced", env, 2)
	session("go replaced, again", env, 2)
	session("a variable changed", append(env, "GOPATH="+filepath.Join(home, "gopath")), 3)
	session("the first variables again", env, 3)
	// caches + caches_from_toolchains: false: nothing is asked, even
	// with a new go whose answer is not kept.
	writeGo("# replaced again\n")
	harness.WriteSystemConfig(t, env, "caches: ["+gocache+"]\ncaches_from_toolchains: false\n")
	out = session("caches_from_toolchains: false", env, 3)
	if !strings.Contains(out, `"path":"`+gocache+`","source":"caches","layer":"overlay"`) {
		t.Errorf("the config's cache is not layered:\n%s", out)
	}
	// A cache the config names is not known as Go's: no cache program.
	if !strings.Contains(out, "prog=\n") {
		t.Errorf("a session without the toolchains' answer set GOCACHEPROG:\n%s", out)
	}
}
