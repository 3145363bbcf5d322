package supervisor

import (
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// writableCaches are the folders the kernel layer grants beside the
// roots: the caches the shell may write that lie in no root.
func writableCaches(caches []plan.Cache) []string {
	var out []string
	for _, c := range caches {
		if (c.Layer == plan.CacheOverlay || c.Layer == plan.CacheDirect) && c.Within == "" {
			out = append(out, c.Path)
		}
	}
	return out
}

// CachesText says what holds for the caches of a session's shell, for
// policy: held when every cache is writable without the person's own
// changing (an overlay, or in a writable root).
func CachesText(caches []plan.Cache) (bool, string) {
	if len(caches) == 0 {
		return false, "no toolchain cache was found when the session started (the toolchains are not asked in read-only or danger-full-access mode, with caches_writable: off or caches_from_toolchains: false)"
	}
	var cow, direct, ro []string
	for _, c := range caches {
		switch c.Layer {
		case plan.CacheOverlay:
			cow = append(cow, c.Path)
		case plan.CacheDirect:
			direct = append(direct, c.Path)
		case plan.CacheReadOnly:
			ro = append(ro, c.Path+" ("+c.Why+")")
		}
	}
	var parts []string
	if len(cow) > 0 {
		parts = append(parts, "copy-on-write, what the session writes is discarded when it ends: "+strings.Join(cow, ", "))
	}
	if len(direct) > 0 {
		parts = append(parts, "writable directly, what the session writes stays and the person's builds use it: "+strings.Join(direct, ", "))
	}
	if len(ro) > 0 {
		parts = append(parts, "read-only: "+strings.Join(ro, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "every cache lies in a writable root")
	}
	return len(direct)+len(ro) == 0, strings.Join(parts, "; ")
}

// WouldCaches says what dsh-fs exec would do with the caches here.
func WouldCaches(s *config.Settings) string {
	p := s.Policy
	switch {
	case p.Mode == policy.ReadOnly:
		return "dsh-fs exec would leave them read-only: read-only mode"
	case p.Mode == policy.DangerFullAccess:
		return "dsh-fs exec would leave them writable: danger-full-access mode"
	case s.Caches.Writable == policy.CachesOff:
		return "dsh-fs exec would leave them read-only: caches_writable: off"
	case s.Caches.Writable == policy.CachesDirect:
		return "dsh-fs exec would make them writable roots: caches_writable: direct"
	}
	if ok, why := layout.MountLayer(); !ok {
		return "dsh-fs exec could not layer them (" + why + "): they would stay read-only"
	}
	return "dsh-fs exec would put a copy-on-write overlay over the toolchains' caches here"
}
