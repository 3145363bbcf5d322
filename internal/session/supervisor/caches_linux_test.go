package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestCachesText pins what policy says of a session's caches: held only
// when every cache is writable without the person's changing.
func TestCachesText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caches []plan.Cache
		held   bool
		want   []string
	}{
		{name: "none", want: []string{"no toolchain cache was found"}},
		{name: "overlays and a root", held: true, caches: []plan.Cache{{Path: "/c/go", Layer: plan.CacheOverlay},
			{Path: "/c/npm", Layer: plan.CacheOverlay}, {Path: "/w/.cache", Layer: plan.CacheInRoot}},
			want: []string{"copy-on-write, what the session writes is discarded when it ends: /c/go, /c/npm"}},
		{name: "only in a root", held: true, caches: []plan.Cache{{Path: "/w/.cache", Layer: plan.CacheInRoot}},
			want: []string{"every cache lies in a writable root"}},
		{name: "direct", caches: []plan.Cache{{Path: "/c/go", Layer: plan.CacheDirect}},
			want: []string{"writable directly, what the session writes stays and the person's builds use it: /c/go"}},
		{name: "read-only", caches: []plan.Cache{{Path: "/c/go", Layer: plan.CacheOverlay},
			{Path: "/c/mod", Layer: plan.CacheReadOnly, Why: "the kernel refused the copy-on-write overlay: overlay: permission denied"}},
			want: []string{"copy-on-write, what the session writes is discarded when it ends: /c/go; read-only: /c/mod (the kernel refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, text := CachesText(tc.caches)
			if held != tc.held {
				t.Errorf("held %v, want %v (%s)", held, tc.held, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not say %q", text, w)
				}
			}
		})
	}
}

// TestProbeOverlays: a probe that cannot run (here /bin/false, which
// prints no answer) refuses every overlay, saying so, and the overlays'
// folders are made once: a folder that exists is not reused.
func TestProbeOverlays(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the probe's mount namespace needs root in this test (exec's own tests cover the user namespace)")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "lower"), 0o755)
	overlays, err := layout.MakeOverlays(filepath.Join(dir, "caches"), []plan.Cache{{Path: filepath.Join(dir, "lower")}, {Path: filepath.Join(dir, "lower")}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(overlays) != 2 || overlays[0].Upper == overlays[1].Upper || !strings.HasPrefix(overlays[1].Work, filepath.Join(dir, "caches")) {
		t.Errorf("overlays %+v", overlays)
	}
	if _, err := layout.MakeOverlays(filepath.Join(dir, "caches"), nil, false); err == nil {
		t.Errorf("MakeOverlays reused a folder that exists")
	}
	for i, why := range probeOverlays("/bin/false", plan.Files{Overlays: overlays}) {
		if !strings.Contains(why, "the probe failed: exit status 1") {
			t.Errorf("overlay %d: %q, want the probe's failure", i, why)
		}
	}
}

// TestGoCacheProgEnv: CMD's go uses the cache program only where the
// build cache is an overlay without metacopy, the person set no
// GOCACHEPROG, and exec's path is one word of it.
func TestGoCacheProgEnv(t *testing.T) {
	over := []plan.Cache{{Path: "/home/p/.cache/go-build", Source: "go env GOCACHE", Layer: plan.CacheOverlay}}
	direct := []plan.Cache{{Path: "/home/p/.cache/go-build", Source: "go env GOCACHE", Layer: plan.CacheDirect}}
	listed := []plan.Cache{{Path: "/home/p/.cache/go-build", Source: "caches", Layer: plan.CacheOverlay}}
	for _, c := range []struct {
		what, self string
		env        []string
		caches     []plan.Cache
		metacopy   bool
		want       string
	}{
		{"an overlay, GOCACHE unset", "/usr/bin/dsh-fs", nil, over, false,
			"GOCACHEPROG=/usr/bin/dsh-fs __gocacheprog GOCACHE=/home/p/.cache/go-build"},
		{"an overlay with metacopy", "/usr/bin/dsh-fs", nil, over, true, ""},
		{"an overlay, GOCACHE set", "/usr/bin/dsh-fs", []string{"GOCACHE=/home/p/.cache/go-build"}, over, false,
			"GOCACHEPROG=/usr/bin/dsh-fs __gocacheprog"},
		{"the person's GOCACHEPROG", "/usr/bin/dsh-fs", []string{"GOCACHEPROG=/bin/mine"}, over, false, ""},
		{"direct", "/usr/bin/dsh-fs", nil, direct, false, ""},
		{"a cache the config names", "/usr/bin/dsh-fs", nil, listed, false, ""},
		{"no caches", "/usr/bin/dsh-fs", nil, nil, false, ""},
		{"a space in exec's path", "/opt/my tools/dsh-fs", nil, over, false, ""},
	} {
		if got := strings.Join(goCacheProgEnv(c.self, c.env, c.caches, c.metacopy), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
}
