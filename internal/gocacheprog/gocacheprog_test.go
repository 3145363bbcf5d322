//go:build unix

package gocacheprog

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain makes this test binary the cache program when the go command
// starts it as GOCACHEPROG (serveEnv set).
func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := Serve(os.Stdin, os.Stdout, os.Getenv("GOCACHE")); err != nil {
			os.Stderr.WriteString("gocacheprog: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const serveEnv = "DSH_FS_TEST_GOCACHEPROG_SERVE"

// stamps are the mtime and ctime of every file under dir.
func stamps(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := os.Stat(p); err == nil {
				out[p] = fi.ModTime().String()
			}
		}
		return nil
	})
	return out
}

// TestServeWithGo: the real go command builds a package through Serve
// into an empty cache, then again with nothing to rebuild, from the
// entries Serve wrote, and Serve marks none of them used, even aged
// past the hour after which the go command itself marks each entry it
// uses (the mark that a copy-on-write overlay pays for by copying the
// entry up). The control: go alone marks them.
func TestServeWithGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on $PATH")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cache, mod := filepath.Join(dir, "cache"), filepath.Join(dir, "mod")
	os.MkdirAll(filepath.Join(mod, "lib"), 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "lib", "lib.go"), []byte("package lib\n\n// F is one.\nfunc F() int { return 1 }\n"), 0o644)
	build := func(prog bool) string {
		t.Helper()
		c := exec.Command(goBin, "build", "-x", "./lib")
		c.Dir = mod
		c.Env = append(os.Environ(), "GOCACHE="+cache, "GOTOOLCHAIN=local", "GOFLAGS=", "CGO_ENABLED=0", "GOTELEMETRY=off", "GOCACHEPROG=")
		if prog {
			c.Env = append(c.Env, "GOCACHEPROG="+self, serveEnv+"=1")
		}
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("go build (GOCACHEPROG %v): %v\n%s", prog, err, out)
		}
		return string(out)
	}
	compiled := func(out string) bool {
		return strings.Contains(out, "/compile ") || strings.Contains(out, "compile -o")
	}
	if out := build(true); !compiled(out) {
		t.Fatalf("the first build compiled nothing:\n%s", out)
	}
	age := func() {
		old := time.Now().Add(-3 * time.Hour)
		filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
	}
	age()
	before := stamps(t, cache)
	if out := build(true); compiled(out) {
		t.Errorf("the second build, through Serve, compiled again:\n%s", out)
	}
	after := stamps(t, cache)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s was touched: %s, then %s", p, s, after[p])
		}
	}
	// The control: the go command alone marks the aged entries it uses.
	if out := build(false); compiled(out) {
		t.Errorf("go alone compiled again from Serve's entries:\n%s", out)
	}
	marked := 0
	for p, s := range stamps(t, cache) {
		if before[p] != "" && before[p] != s {
			marked++
		}
	}
	if marked == 0 {
		t.Error("the go command alone marked no entry: the test cannot see a mark")
	}
}
