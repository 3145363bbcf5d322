//go:build unix

package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/gocacheprog"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/toolchains"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// startFindCaches starts finding the toolchains' caches, outside the
// session and with exec's own environment (the person's), while the
// supervisor readies the rest: the answer kept by an earlier session for
// the same toolchains, variables and config files (toolchains.Find), else
// the toolchains' own; the function it returns waits for the answer. The
// config's caches come first; the toolchains are not asked, nor their
// answers read, where caches_from_toolchains is false.
func startFindCaches(s *config.Settings) func() []toolchains.Cache {
	var listed []toolchains.Cache
	for _, p := range s.Caches.Paths {
		listed = append(listed, toolchains.Cache{Path: p, Source: "caches"})
	}
	if !s.Caches.FromToolchains || s.Caches.Writable == policy.CachesOff || s.Policy.Mode != policy.WorkspaceWrite {
		// Read-only, danger-full-access and caches_writable: off:
		// nothing to layer, so nothing to ask (and no start-up time
		// spent on it).
		return func() []toolchains.Cache { return listed }
	}
	done := make(chan []toolchains.Cache, 1)
	env := WithoutSessionVars(os.Environ())
	go func() { done <- toolchains.Find(wire.RuntimeBase(), env) }()
	return func() []toolchains.Cache { return append(listed, <-done...) }
}

// cacheSetup is what readyCaches readied for a session.
type cacheSetup struct {
	plan     cachePlan
	overlays []plan.Overlay
	dir      string // the overlays' folder; "" without one
	tmpfs    uint64 // the size of the tmpfs mounted on dir (plan.Files.OverlayMemory); 0 on disk
	err      error
}

// readyCaches decides how the shell of a session of s sees each cache
// found, and readies the copy-on-write layers in the session's folder
// dir: their upper and work folders in dir/caches, tried once in a
// throwaway mount namespace (probeOverlays; a verdict kept by an
// earlier start spares it: probes.overlays), so an overlay the kernel
// refuses leaves its cache read-only, said in the record, rather than
// fail the session. roots are the kernel layer's roots; mountsWhy says
// why the session has no mount layer ("" where it has one). It touches
// nothing but dir/caches, so it runs beside the rest of the start.
func readyCaches(pr *probes, dir string, s *config.Settings, found []toolchains.Cache, roots []string, mountsWhy string) cacheSetup {
	p := s.Policy
	private := []string{dir}
	for _, f := range append(slices.Clip(p.TrustedFiles), p.ConfigFiles...) {
		if c, err := filepath.EvalSymlinks(f); err == nil {
			f = c
		}
		private = append(private, f)
	}
	setup := cacheSetup{plan: planCaches(found, p, roots, private, s.Caches.Writable, mountsWhy)}
	caches := setup.plan.Overlays()
	if len(caches) == 0 {
		return setup
	}
	setup.dir = filepath.Join(dir, "caches")
	overlays, refused, probed, tmpfs, err := probedOverlays(pr, setup.dir, caches, overlayTmpfsSize(dir))
	if err != nil {
		setup.err = err
		return setup
	}
	setup.tmpfs = tmpfs
	for i, o := range overlays {
		if refused[i] != "" {
			setup.plan.Refuse(o.Path, "the kernel refused the copy-on-write overlay: "+refused[i])
			continue
		}
		// Afresh, where the probe mounted it: a volatile overlay's
		// work folder refuses a second mount (work/incompat/volatile).
		// In a tmpfs the probe's folders went with its namespace.
		if err := resetProbed(o, probed && tmpfs == 0); err != nil {
			setup.err = err
			return setup
		}
		setup.overlays = append(setup.overlays, o)
	}
	return setup
}

// probedOverlays makes the overlays of caches in the new folder dir,
// their folders in a tmpfs of tmpfs bytes (0 on disk), and probes them
// (probes.overlays). A kernel that refuses them over a tmpfs (one built
// without its extended attributes) may allow them on disk: where every
// one is refused, the folders are made there and probed so, and tmpfs
// comes back 0 (one refused for its own cache's sake leaves the rest in
// the tmpfs).
func probedOverlays(pr *probes, dir string, caches []plan.Cache, tmpfs uint64) (overlays []plan.Overlay, refused []string, probed bool, _ uint64, err error) {
	if overlays, err = layout.MakeOverlays(dir, caches, tmpfs > 0); err != nil {
		return nil, nil, false, 0, err
	}
	refused, probed = pr.overlays(overlays, dir, tmpfs)
	if tmpfs == 0 || slices.Contains(refused, "") {
		return overlays, refused, probed, tmpfs, nil
	}
	if err := layout.RemoveTree(dir); err != nil {
		return nil, nil, false, 0, err
	}
	if overlays, err = layout.MakeOverlays(dir, caches, false); err != nil {
		return nil, nil, false, 0, err
	}
	refused, probed = pr.overlays(overlays, dir, 0)
	return overlays, refused, probed, 0, nil
}

// resetProbed empties the upper and work folders of o where the probe
// mounted it.
func resetProbed(o plan.Overlay, probed bool) error {
	if !probed {
		return nil
	}
	return layout.ResetOverlay(o)
}

// applyCaches puts what readyCaches readied in the session's layers:
// the overlays in the mount plan, the direct caches among the read-only
// tree's writable folders, every cache in the record.
func applyCaches(setup cacheSetup, shell *wire.Shell) error {
	if setup.err != nil {
		return setup.err
	}
	if m := shell.Mounts; m != nil {
		for _, c := range setup.plan.Direct() {
			m.Writable = append(m.Writable, c.Path)
		}
		m.Overlays, m.OverlayDir = setup.overlays, setup.dir
		if len(setup.overlays) > 0 {
			m.OverlayMemory = setup.tmpfs
		}
	}
	shell.Caches = setup.plan.Caches
	return nil
}

// goCacheProgEnv are the variables CMD's environment env gains so that
// its go commands use the Go build cache through the session's cache
// program (argGoCacheProg), self run as GOCACHEPROG, where the build
// cache's overlay would copy each entry go marks as used up whole (no
// metacopy: a user namespace's), and GOCACHE, the folder go named,
// where the person has not set it. Nothing where the overlay has
// metacopy (a mark copies metadata alone), where the person set
// GOCACHEPROG, where the cache is no overlay, or where self's path
// cannot be one word of GOCACHEPROG.
func goCacheProgEnv(self string, env []string, caches []plan.Cache, metacopy bool) []string {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	i := slices.IndexFunc(caches, func(c plan.Cache) bool { return c.Source == "go env GOCACHE" })
	if i < 0 || caches[i].Layer != plan.CacheOverlay || metacopy || get("GOCACHEPROG") != "" ||
		!filepath.IsAbs(self) || strings.ContainsAny(self, " \t\n'\"\\") {
		return nil
	}
	out := []string{"GOCACHEPROG=" + self + " " + argGoCacheProg}
	if get("GOCACHE") == "" {
		out = append(out, "GOCACHE="+caches[i].Path)
	}
	return out
}

// goCacheProg is the build cache program's whole life.
func goCacheProg() int {
	if err := gocacheprog.Serve(os.Stdin, os.Stdout, os.Getenv("GOCACHE")); err != nil {
		fmt.Fprintln(os.Stderr, "dsh-fs: the session's Go build cache:", err)
		return statusFailed
	}
	return statusOK
}
