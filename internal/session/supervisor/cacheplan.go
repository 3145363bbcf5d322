package supervisor

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/toolchains"
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

// cachePlan is what a session makes of the caches it was given.
type cachePlan struct {
	// Caches are every cache, in the order given.
	Caches []plan.Cache
}

// Overlays are the caches to mount an overlay on.
func (p cachePlan) Overlays() []plan.Cache { return p.layer(plan.CacheOverlay) }

// Direct are the caches to make writable roots.
func (p cachePlan) Direct() []plan.Cache { return p.layer(plan.CacheDirect) }

func (p cachePlan) layer(l string) []plan.Cache {
	var out []plan.Cache
	for _, c := range p.Caches {
		if c.Layer == l && c.Within == "" {
			out = append(out, c)
		}
	}
	return out
}

// Refuse makes the cache at path read-only, and those within it, for
// the reason why.
func (p cachePlan) Refuse(path, why string) {
	for i, c := range p.Caches {
		if c.Path == path || c.Within == path {
			p.Caches[i].Layer, p.Caches[i].Why = plan.CacheReadOnly, why
		}
	}
}

// planCaches decides how the shell of a session under p sees each found
// cache, given the canonical writable roots, caches_writable (writable),
// why there is no mount layer (mountsWhy, "" where there is one) and the
// private paths the session must never see writable (its own folder, the
// config files). A cache in a writable root is as writable as the root;
// one holding a root or a private path stays read-only, since an overlay
// would hide the root's real writes or let the session rewrite its
// policy. Read-only mode keeps every cache read-only; danger-full-access
// leaves them writable.
func planCaches(found []toolchains.Cache, p policy.Policy, roots, private []string, writable, mountsWhy string) cachePlan {
	var cp cachePlan
	for _, f := range found {
		c, err := filepath.EvalSymlinks(f.Path)
		if err != nil || !filepath.IsAbs(c) {
			continue
		}
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue
		}
		if slices.ContainsFunc(cp.Caches, func(o plan.Cache) bool { return o.Path == c }) {
			continue
		}
		cp.Caches = append(cp.Caches, plan.Cache{Path: c, Source: f.Source})
	}
	// Outermost first, so that a cache's outer one is decided before it.
	order := slices.Clone(cp.Caches)
	slices.SortStableFunc(order, func(a, b plan.Cache) int { return len(a.Path) - len(b.Path) })
	for _, o := range order {
		i := slices.IndexFunc(cp.Caches, func(c plan.Cache) bool { return c.Path == o.Path })
		c := &cp.Caches[i]
		c.Layer, c.Why = cacheLayer(c.Path, p, roots, private, writable, mountsWhy)
		// The outermost cache holding this one whose layer is mounted
		// covers it; a read-only one (too broad, say) covers nothing.
		for _, outer := range order {
			if outer.Path == c.Path || !sandbox.Beneath(outer.Path, c.Path) {
				continue
			}
			j := slices.IndexFunc(cp.Caches, func(x plan.Cache) bool { return x.Path == outer.Path })
			if o := cp.Caches[j]; o.Within == "" && (o.Layer == plan.CacheOverlay || o.Layer == plan.CacheDirect) {
				c.Layer, c.Within, c.Why = o.Layer, o.Path, "covered by the layer of "+o.Path
				break
			}
		}
	}
	return cp
}

// systemFolders are what no cache may hold: a session that rewrote them
// in its own view (the user database, the loader's configuration, the
// programs) would change what every dsh-fs call inside takes for the
// system. A variable the harness set wrongly (GOCACHE=/) names one.
var systemFolders = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr"}

// cacheLayer is the layer of the one cache c, and why.
func cacheLayer(c string, p policy.Policy, roots, private []string, writable, mountsWhy string) (string, string) {
	for _, r := range roots {
		if sandbox.Beneath(r, c) {
			return plan.CacheInRoot, "in the writable root " + r
		}
	}
	switch p.Mode {
	case policy.ReadOnly:
		return plan.CacheReadOnly, "read-only mode"
	case policy.DangerFullAccess:
		return plan.CacheDirect, "danger-full-access mode"
	}
	for _, r := range roots {
		if sandbox.Beneath(c, r) {
			return plan.CacheReadOnly, "it holds the writable root " + r
		}
	}
	for _, q := range private {
		if sandbox.Beneath(c, q) {
			return plan.CacheReadOnly, "it holds " + q + ", which the session must not rewrite"
		}
	}
	if c == p.Home {
		return plan.CacheReadOnly, "the home folder is too broad for a cache"
	}
	for _, q := range systemFolders {
		if sandbox.Beneath(c, q) {
			return plan.CacheReadOnly, "it holds " + q + ", too broad for a cache"
		}
	}
	switch {
	case writable == policy.CachesOff:
		return plan.CacheReadOnly, "caches_writable: off"
	case writable == policy.CachesDirect:
		return plan.CacheDirect, "caches_writable: direct: the session's writes stay, and can change what the person's builds use"
	case mountsWhy != "":
		return plan.CacheReadOnly, "no copy-on-write layer: " + mountsWhy
	}
	return plan.CacheOverlay, ""
}
