package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/toolchains"
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
	found := []toolchains.Cache{
		{Path: at("gocache"), Source: "go env GOCACHE"},
		{Path: at("link"), Source: "a symlink to it"},
		{Path: at("gomod"), Source: "go env GOMODCACHE"},
		{Path: at("missing"), Source: "npm"},
		{Path: at("ws/cache"), Source: "caches"},
		{Path: at("home/.cache/go-build"), Source: "inner"},
		{Path: at("home/.cache"), Source: "XDG_CACHE_HOME"},
		{Path: at("holds"), Source: "caches"},
		{Path: at("run"), Source: "caches"},
		{Path: "/", Source: "GOCACHE=/"},
		{Path: "/etc", Source: "GOMODCACHE=/etc"},
		{Path: at("home"), Source: "the home folder"},
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
