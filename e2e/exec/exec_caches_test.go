//go:build unix

package exec

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExecCaches* tests (issue 23) run go build and go test of a
// module whose dependency must be downloaded, inside a dsh-fs exec
// session, with the person's Go caches as the toolchain names them: the
// build cache warm, the module cache without the dependency, a local
// GOPROXY=file://… and no network. The session finds the caches with
// `go env` and sees each through a copy-on-write layer: the build and
// the download work, and afterwards the person's caches hold nothing the
// session wrote, and the layer's private folder is gone.

// cacheModule is the dependency the session downloads.
const cacheModule = "example.com/dep"

// cacheGoEnv are the variables of every go command of these tests: no
// network (GOPROXY names the test's folder), no checksum database, no
// toolchain switch and no cgo (no C compiler needed).
func cacheGoEnv(proxy, gocache, gomod, gotmp string) []string {
	return []string{"GOPROXY=file://" + proxy, "GOSUMDB=off", "GONOSUMDB=*", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod",
		"CGO_ENABLED=0", "GOCACHE=" + gocache, "GOMODCACHE=" + gomod, "GOTMPDIR=" + gotmp, "GOTELEMETRY=off"}
}

// writeProxy makes dir a module proxy (the GOPROXY protocol's files)
// that serves cacheModule at v1.0.0.
func writeProxy(t *testing.T, dir string) {
	t.Helper()
	v := filepath.Join(dir, cacheModule, "@v")
	mod := "module " + cacheModule + "\n\ngo 1.21\n"
	harness.WriteTree(t, v, map[string]string{
		"list":        "v1.0.0\n",
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  mod,
	})
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, body := range map[string]string{
		"go.mod": mod,
		"dep.go": "package dep\n\n// Greeting is what the session's program prints.\nfunc Greeting() string { return \"hello from the dependency\" }\n",
	} {
		w, err := z.Create(cacheModule + "@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// warmGoCache is a build cache that holds the standard library's
// packages a test of the cache layout's module needs, made once per
// machine and toolchain (a cold build takes half a minute on a loaded
// machine): the person's build cache of each test is a hard-linked copy
// of it. It lives in /var/tmp, not /tmp, whose first two levels the
// socket layer's walk searches within a budget (TestExecSocketsOutside).
var warmGoCache = sync.OnceValues(func() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go is not on $PATH")
	}
	base := "/var/tmp"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	dir := filepath.Join(base, fmt.Sprintf("dsh-fs-test-gocache-%d-%s", os.Geteuid(), runtime.Version()))
	if _, err := os.Stat(filepath.Join(dir, "README")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(base, "dsh-fs-test-gocache-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	mod := filepath.Join(tmp, "warm")
	files := map[string]string{
		"go.mod":    "module warm\n\ngo 1.21\n",
		"w.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(W()) }\n\n// W is what the test calls.\nfunc W() string { return \"w\" }\n",
		"w_test.go": "package main\n\nimport \"testing\"\n\nfunc TestW(t *testing.T) {\n\tif W() != \"w\" {\n\t\tt.Fatal(W())\n\t}\n}\n",
	}
	for name, body := range files {
		os.MkdirAll(mod, 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	cache := filepath.Join(tmp, "cache")
	os.MkdirAll(filepath.Join(tmp, "gotmp"), 0o755)
	for _, args := range [][]string{{"build", "-o", filepath.Join(tmp, "w"), "."}, {"test", "-count=1", "."}} {
		c := exec.Command(goBin, args...)
		c.Dir = mod
		c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp},
			cacheGoEnv(filepath.Join(tmp, "noproxy"), cache, filepath.Join(tmp, "gomod"), filepath.Join(tmp, "gotmp"))...)
		if out, err := c.CombinedOutput(); err != nil {
			return "", fmt.Errorf("warming the build cache: go %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Rename(cache, dir); err != nil && !os.IsExist(err) && !strings.Contains(err.Error(), "not empty") {
		return "", err
	}
	return dir, nil
})

// linkTree copies the tree from to to, each regular file a hard link
// (a copy where the two lie on different file systems).
func linkTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if os.Link(p, dst) == nil {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cacheLayout is one test's folders: the proxy, the person's caches and
// home, and the workspace, a module that needs cacheModule.
type cacheLayout struct {
	dir, proxy, home, gocache, gomod, ws string
}

func newCacheLayout(t *testing.T, dir string) cacheLayout {
	t.Helper()
	warm, err := warmGoCache()
	if err != nil {
		t.Skip(err)
	}
	l := cacheLayout{dir: dir, proxy: filepath.Join(dir, "proxy"), home: filepath.Join(dir, "home"),
		gocache: filepath.Join(dir, "home", "gocache"), gomod: filepath.Join(dir, "home", "gomod"), ws: filepath.Join(dir, "ws")}
	writeProxy(t, l.proxy)
	// The build cache's files are links to the shared warm cache: a
	// session that wrote through them would change it for every test.
	linkTree(t, warm, l.gocache)
	os.MkdirAll(l.gomod, 0o755)
	harness.WriteTree(t, l.ws, map[string]string{
		"go.mod":       "module example.com/app\n\ngo 1.21\n\nrequire " + cacheModule + " v1.0.0\n",
		"main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"" + cacheModule + "\"\n)\n\nfunc main() { fmt.Println(dep.Greeting()) }\n",
		"main_test.go": "package main\n\nimport (\n\t\"testing\"\n\n\t\"" + cacheModule + "\"\n)\n\nfunc TestGreeting(t *testing.T) {\n\tif dep.Greeting() == \"\" {\n\t\tt.Fatal(\"no greeting\")\n\t}\n}\n",
		".gotmp/.keep": "",
	})
	return l
}

// env is the session's environment beyond exec's own: the person's
// home and caches, as the toolchain would find them.
func (l cacheLayout) env() []string {
	return append([]string{"HOME=" + l.home}, cacheGoEnv(l.proxy, l.gocache, l.gomod, filepath.Join(l.ws, ".gotmp"))...)
}

// cacheScript builds and tests the module, plants a file in the build
// cache, and prints the session's policy last.
const cacheScript = `set -e
go build -o app . && ./app
go test -count=1 ./...
ls "$GOMODCACHE/` + cacheModule + `@v1.0.0/dep.go"
echo planted > "$GOCACHE/planted-by-session"
cat "$GOCACHE/planted-by-session"
dsh-fs policy --context --verbose | grep '^toolchain caches in the shell: copy-on-write'
dsh-fs policy --verbose`

// checkCacheSession checks what a session of cacheScript printed, and
// that it left nothing in the person's caches nor of its private layer.
func checkCacheSession(t *testing.T, l cacheLayout, out string) {
	t.Helper()
	for _, want := range []string{"hello from the dependency\n", "ok  \texample.com/app", "planted\n",
		"toolchain caches in the shell: copy-on-write, what the session writes is discarded when it ends: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the session printed no %q:\n%s", want, out)
		}
	}
	var pol struct {
		Shell struct {
			Session    string `json:"session"`
			CachesHeld bool   `json:"caches_held"`
			Caches     string `json:"caches"`
			CacheList  []struct {
				Path  string `json:"path"`
				Layer string `json:"layer"`
			} `json:"cache_list"`
		} `json:"shell"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &pol); err != nil {
		t.Fatalf("no policy result last: %v\n%s", err, out)
	}
	// Inside a session, with the cache layer: the schema holds too.
	harness.Validate(t, harness.Schemas(t)["result-policy.json"], "result-policy.json", lines[len(lines)-1])
	if !pol.Shell.CachesHeld {
		t.Errorf("policy: caches_held false: %s", pol.Shell.Caches)
	}
	layers := map[string]string{}
	for _, c := range pol.Shell.CacheList {
		layers[c.Path] = c.Layer
	}
	for _, c := range []string{l.gocache, l.gomod} {
		if layers[c] != "overlay" {
			t.Errorf("policy: cache %s has layer %q, want overlay (%v)", c, layers[c], pol.Shell.CacheList)
		}
	}
	// The person's caches: no module downloaded, no file planted.
	wantAbsent(t, filepath.Join(l.gomod, cacheModule+"@v1.0.0"))
	wantAbsent(t, filepath.Join(l.gomod, "cache", "download", cacheModule))
	wantAbsent(t, filepath.Join(l.gocache, "planted-by-session"))
	// The record's folder, which held the layer's upper folders, is gone.
	if pol.Shell.Session == "" {
		t.Errorf("policy names no session record")
	} else {
		wantAbsent(t, filepath.Dir(pol.Shell.Session))
	}
}

// TestExecCaches: as root, the session's go build and go test download
// and build through the person's caches, and leave them as they were.
// Before: go: example.com/dep@v1.0.0: mkdir …/gomod/cache/download/…:
// read-only file system (the caches were read-only for the shell).
func TestExecCaches(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the root session's test; TestExecCachesRealUser runs as an ordinary user")
	}
	l := newCacheLayout(t, t.TempDir())
	env := append(execEnv(t, l.ws), l.env()...)
	// cacheScript runs go build and go test, each of which compiles and
	// links (4.2 s in all on a loaded 2-core machine under -race): three
	// processes' guard, not one's.
	code, stdout, stderr := execShWithin(t, env, l.ws, fenced(l.ws), cacheScript, 3*harness.Timeout)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	checkCacheSession(t, l, stdout)
}

// TestExecCachesRealUser is TestExecCaches as the ordinary user
// dshfs-agent, whose overlay is mounted in its user namespace.
func TestExecCachesRealUser(t *testing.T) {
	requireUserNamespaces(t)
	harness.RequireLandlock(t)
	bin, dir := harness.UnprivilegedBin(t)
	l := newCacheLayout(t, dir)
	for _, d := range []string{l.proxy, l.home, l.ws} {
		chownTree(t, d)
	}
	goBin, _ := exec.LookPath("go")
	session := func(script string) (string, error) {
		c := exec.Command(bin, "exec", "--cwd", l.ws, "--tmp=false", "--", "sh", "-c", script)
		c.Dir = l.ws
		c.Env = append(agentExecEnv(t, bin, filepath.Join(dir, "etc"), "PATH="+filepath.Dir(bin)+":"+filepath.Dir(goBin)+":/usr/bin:/bin"), l.env()...)
		asAgent(t, c)
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		if err != nil {
			err = fmt.Errorf("exec as %s: %v\nstdout: %s\nstderr: %s", agentUserName, err, out.String(), errb.String())
		}
		return out.String(), err
	}
	// Where this kernel or a security module refuses the user
	// namespace's overlay, the caches stay read-only and policy says why.
	out, err := session("dsh-fs policy --verbose")
	if err != nil {
		t.Fatal(err)
	}
	if _, after, ok := strings.Cut(out, "the kernel refused the copy-on-write overlay: "); ok {
		why, _, _ := strings.Cut(after, ")")
		t.Skipf("the user namespace does not allow the overlay here: %s", why)
	}
	out, err = session(cacheScript)
	if err != nil {
		t.Fatal(err)
	}
	checkCacheSession(t, l, out)
}

// TestExecCachesKilled: the layer's private folder is out of the shell's
// sight (an empty folder there), and goes when the session ends, also
// when CMD is killed: what the session wrote in a cache never stays. A
// nested exec inside may write the cache too (its own kernel layer
// grants the outer overlays).
func TestExecCachesKilled(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the root session's test; TestExecCachesRealUser runs as an ordinary user")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on $PATH: no toolchain to name the caches")
	}
	dir := t.TempDir()
	gocache, ws := filepath.Join(dir, "home", "gocache"), filepath.Join(dir, "ws")
	harness.WriteTree(t, dir, map[string]string{"home/gocache/README": "the person's\n", "ws/.keep": ""})
	env := append(execEnv(t, ws), "HOME="+filepath.Join(dir, "home"), "GOCACHE="+gocache, "GOMODCACHE="+filepath.Join(dir, "home", "nomod"))
	script := `echo x > "$GOCACHE/planted" && cat "$GOCACHE/planted"
dsh-fs exec -- sh -c 'echo y > "$GOCACHE/nested"' && echo "nested=$(cat "$GOCACHE/nested")"
d=$(dsh-fs policy --verbose | sed -n 's/.*"overlay_dir":"\([^"]*\)".*/\1/p')
echo "dir=$d"; echo "entries=$(ls -A "$d" | wc -l)"
kill -9 $$`
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
	if code != 128+9 {
		t.Fatalf("exit %d, want 137\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	_, after, _ := strings.Cut(stdout, "dir=")
	overlayDir, _, _ := strings.Cut(after, "\n")
	if !strings.HasPrefix(stdout, "x\n") || !filepath.IsAbs(overlayDir) || !strings.Contains(stdout, "entries=0\n") {
		t.Errorf("want the planted file read back, and the layer's folder empty in the session:\n%s\nstderr: %s", stdout, stderr)
	}
	// A nested exec keeps the outer overlays writable.
	if !strings.Contains(stdout, "nested=y\n") {
		t.Errorf("a nested session could not write the cache:\n%s\nstderr: %s", stdout, stderr)
	}
	wantAbsent(t, filepath.Join(gocache, "planted"))
	wantAbsent(t, filepath.Join(gocache, "nested"))
	if filepath.IsAbs(overlayDir) {
		wantAbsent(t, filepath.Dir(overlayDir))
	}
	wantContent(t, filepath.Join(gocache, "README"), "the person's\n")
}

// TestExecCachesDirectAndOff: the trusted caches_writable: direct makes
// a cache a plain writable root (what the session writes stays), and a
// session file's caches_writable: off leaves it read-only; policy says
// which, and why.
func TestExecCachesDirectAndOff(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the root session's test")
	}
	dir := t.TempDir()
	cache, ws := filepath.Join(dir, "home", "cache"), filepath.Join(dir, "ws")
	harness.WriteTree(t, dir, map[string]string{"home/cache/.keep": "", "ws/.keep": "", "off.yaml": "caches_writable: \"off\"\n"})
	env := append(execEnv(t, ws), "HOME="+filepath.Join(dir, "home"))
	harness.WriteSystemConfig(t, env, "caches: ["+cache+"]\ncaches_from_toolchains: false\ncaches_writable: direct\n")
	script := `echo x > "` + cache + `/by-session"; echo "write=$?"; dsh-fs policy --verbose`
	layerOf := func(out string) (string, string, bool) {
		var pol struct {
			Shell struct {
				CachesHeld bool `json:"caches_held"`
				CacheList  []struct {
					Path, Layer, Why string
				} `json:"cache_list"`
			} `json:"shell"`
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		json.Unmarshal([]byte(lines[len(lines)-1]), &pol)
		if len(pol.Shell.CacheList) != 1 || pol.Shell.CacheList[0].Path != cache {
			t.Errorf("cache_list %+v, want %s alone:\n%s", pol.Shell.CacheList, cache, out)
			return "", "", pol.Shell.CachesHeld
		}
		return pol.Shell.CacheList[0].Layer, pol.Shell.CacheList[0].Why, pol.Shell.CachesHeld
	}
	// direct: written, and it stays.
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
	if code != 0 || !strings.Contains(stdout, "write=0") {
		t.Fatalf("direct: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if layer, why, held := layerOf(stdout); layer != "direct" || !strings.Contains(why, "caches_writable: direct") || held {
		t.Errorf("direct: layer %q (%s), caches_held %v", layer, why, held)
	}
	wantContent(t, filepath.Join(cache, "by-session"), "x\n")
	os.Remove(filepath.Join(cache, "by-session"))
	// off, from a session file: read-only.
	code, stdout, stderr = execSh(t, append(env, "DSH_FS_CONFIG="+filepath.Join(dir, "off.yaml")), ws, fenced(ws), script)
	if code != 0 || strings.Contains(stdout, "write=0") || !strings.Contains(stderr, "Read-only file system") {
		t.Fatalf("off: exit %d, want the write refused\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if layer, why, held := layerOf(stdout); layer != "read-only" || why != "caches_writable: off" || held {
		t.Errorf("off: layer %q (%s), caches_held %v", layer, why, held)
	}
	wantAbsent(t, filepath.Join(cache, "by-session"))
}
