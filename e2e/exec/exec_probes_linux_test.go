package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// probesFile is where exec keeps, as root, the verdicts of its probes
// (the kernel allowed an overlay, a user namespace's mounts).
const probesFile = "/run/dsh-fs/kept-probes"

// keptProbe is one verdict of the file: after a first line naming the
// format, one line each, the SHA-256 of its key in hex, a space, and the
// verdict in JSON.
type keptProbe struct {
	Key string `json:"key"`
}

// probeLine is verdict v as a line of the file.
func probeLine(v keptProbe) string {
	sum := sha256.Sum256([]byte(v.Key))
	data, _ := json.Marshal(v)
	return hex.EncodeToString(sum[:]) + " " + string(data)
}

// overlayIdentity is how a verdict's key names a cache folder: its path,
// then its device, inode and mount.
func overlayIdentity(t *testing.T, path string) string {
	t.Helper()
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_MNT_ID, &sx); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("lower=%q lower-id=%d:%d:%d:%d", path, sx.Dev_major, sx.Dev_minor, sx.Ino, sx.Mnt_id)
}

// cacheLayerOf runs `dsh-fs policy --verbose` and a write into $GOCACHE
// in a session, and returns the layer policy names for the cache and
// what the write printed.
func cacheLayerOf(t *testing.T, env []string, ws, cache string) (layer, wrote string) {
	t.Helper()
	code, stdout, stderr := execSh(t, env, ws, fenced(ws),
		`(echo x > "$GOCACHE/planted") 2>/dev/null && echo wrote || echo refused; dsh-fs policy --verbose`)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wrote, after, _ := strings.Cut(stdout, "\n")
	var pol struct {
		Shell struct {
			CacheList []struct {
				Path  string `json:"path"`
				Layer string `json:"layer"`
			} `json:"cache_list"`
		} `json:"shell"`
	}
	if err := json.Unmarshal([]byte(after), &pol); err != nil {
		t.Fatalf("no policy result: %v\n%s", err, stdout)
	}
	for _, c := range pol.Shell.CacheList {
		if c.Path == cache {
			return c.Layer, wrote
		}
	}
	t.Fatalf("policy names no cache %s:\n%s", cache, stdout)
	return "", ""
}

// TestExecProbeVerdictWrong: a verdict exec kept that the kernel allows
// a cache's overlay, which the kernel then refuses, still gives a session
// that starts and is protected as one that probed: the cache read-only,
// the write into it refused, and the wrong verdict forgotten. The cache
// lies on an overlay stacked on an overlay, where the kernel refuses a
// third (its stacking depth); the verdict is an allowed one kept for
// another folder, moved onto it.
func TestExecProbeVerdictWrong(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting the stacked overlay needs root")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on $PATH: no toolchain to name the cache")
	}
	dir := t.TempDir()
	good, ws := filepath.Join(dir, "home", "good"), filepath.Join(dir, "ws")
	harness.WriteTree(t, dir, map[string]string{"home/good/.keep": "", "ws/.keep": ""})
	for _, d := range []string{"l1", "u1", "w1", "m1", "u2", "w2", "m2"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stack := func(lower, upper, work, at string) {
		t.Helper()
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work)
		if out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o", opts, at).CombinedOutput(); err != nil {
			t.Skipf("cannot mount an overlay here: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", at).Run() })
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	stack(j("l1"), j("u1"), j("w1"), j("m1"))
	stack(j("m1"), j("u2"), j("w2"), j("m2"))
	bad := filepath.Join(dir, "m2", "cache")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(cache string) []string {
		return append(execEnv(t, ws), "HOME="+filepath.Join(dir, "home"), "GOCACHE="+cache,
			"GOMODCACHE="+filepath.Join(dir, "home", "nomod"))
	}
	// The control: probed, the stacked cache's overlay is refused, and
	// the session's write into it with it.
	layer, wrote := cacheLayerOf(t, env(bad), ws, bad)
	if layer != "read-only" || wrote != "refused" {
		t.Skipf("the kernel allows the third overlay here (layer %q, %s): nothing to show", layer, wrote)
	}
	// A session with the good cache keeps the verdict that its overlay
	// is allowed.
	if layer, wrote := cacheLayerOf(t, env(good), ws, good); layer != "overlay" || wrote != "wrote" {
		t.Fatalf("the good cache: layer %q, %s; want overlay, wrote", layer, wrote)
	}
	wantAbsent(t, filepath.Join(good, "planted"))
	data, err := os.ReadFile(probesFile)
	if err != nil {
		t.Fatalf("no verdict kept: %v", err)
	}
	head, lines, _ := strings.Cut(string(data), "\n")
	goodID, badID := overlayIdentity(t, good), overlayIdentity(t, bad)
	var forged string
	for _, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		var v keptProbe
		if _, answer, _ := strings.Cut(l, " "); json.Unmarshal([]byte(answer), &v) != nil {
			t.Fatalf("not a verdict: %q", l)
		} else if strings.Contains(v.Key, goodID) {
			forged = strings.Replace(v.Key, goodID, badID, 1)
		}
	}
	if forged == "" {
		t.Fatalf("no verdict kept for %s in %s", goodID, data)
	}
	// The wrong verdict: the stacked cache's overlay is allowed.
	data = []byte(head + "\n" + probeLine(keptProbe{Key: forged}) + "\n" + lines)
	if err := os.WriteFile(probesFile+".test", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(probesFile+".test", probesFile); err != nil {
		t.Fatal(err)
	}
	// The session starts, and is protected as the probed one was.
	layer, wrote = cacheLayerOf(t, env(bad), ws, bad)
	if layer != "read-only" || wrote != "refused" {
		t.Errorf("with the wrong verdict: layer %q, %s; want read-only, refused", layer, wrote)
	}
	wantAbsent(t, filepath.Join(bad, "planted"))
	// And the wrong verdict is gone.
	if data, err := os.ReadFile(probesFile); err != nil || strings.Contains(string(data), badID) {
		t.Errorf("the wrong verdict is still kept (%v): %s", err, data)
	}
}
