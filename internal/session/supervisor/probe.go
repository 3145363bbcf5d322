//go:build unix

package supervisor

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/kept"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The probes' verdicts, kept (docs/design.md §10): each probe is one
// more start of dsh-fs, about as long as the rest of exec's start
// together, and its verdict changes only with what it depends on. A
// verdict that the kernel allowed is kept in the runtime folder
// (probesKept) under the key of everything the kernel's answer depends
// on (probeKey, overlayKey), and a later start with the same key trusts
// it without probing. A refusal is never kept: it is probed again at
// each start, so a verdict kept can only ever have allowed a layer. Where
// a kept verdict turns out wrong, the child's mount fails before CMD
// starts; exec then forgets the verdicts it relied on and starts the
// session once more, probing (Run): the session gets what a probe gives,
// never less protection.

// probesKept is the kind of the kept verdicts: the file "kept-probes"
// in the runtime folder, up to 256 (a few users' caches and kernels).
var probesKept = kept.Kind[probeVerdict]{Name: "kept-probes", Version: 1, Max: 256,
	Key: func(v probeVerdict) string { return v.Key }}

// probeVerdict is one verdict kept: the kernel allowed what Key names.
type probeVerdict struct {
	Key string `json:"key"`
}

// probeKey is what every probe's verdict depends on besides what it
// tried: the kernel as booted (release, boot id: a module loaded or a
// setting changed since boots anew nothing, which the fallback covers),
// the binary that probes and mounts (device, inode, size, time), and the
// user, with the kind of namespace it mounts in. "" where one of them
// cannot be read: then nothing is kept nor trusted.
var probeKey = sync.OnceValue(func() string {
	var u unix.Utsname
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	self, serr := os.Executable()
	var st unix.Stat_t
	if err != nil || serr != nil || unix.Uname(&u) != nil || unix.Stat(self, &st) != nil {
		return ""
	}
	return fmt.Sprintf("kernel=%s boot=%s self=%d:%d:%d:%d.%d uid=%d gid=%d userns=%t",
		unix.ByteSliceToString(u.Release[:]), strings.TrimSpace(string(boot)), st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, os.Geteuid(), os.Getegid(), layout.UserNamespace())
})

// overlayKey is the key of the verdict on overlay o: the probes' key,
// the lower folder by path and identity, and the mount its upper folder
// lies on, or "tmpfs" for one inTmpfs (plan.Files.OverlayMemory). ""
// where one cannot be read.
func overlayKey(o plan.Overlay, inTmpfs bool) string {
	lower, ok := mountIdentity(o.Path, true)
	upper, uok := "tmpfs", true
	if !inTmpfs {
		upper, uok = mountIdentity(o.Upper, false)
	}
	if probeKey() == "" || !ok || !uok {
		return ""
	}
	return fmt.Sprintf("overlay %s lower=%q lower-id=%s upper-id=%s", probeKey(), o.Path, lower, upper)
}

// userNamespaceKey is the key of the user namespace probe's verdict.
func userNamespaceKey() string {
	if probeKey() == "" {
		return ""
	}
	return "userns " + probeKey()
}

// probes are the probes of one session's start: self is dsh-fs, fresh
// has them probe whatever is kept, and used are the keys of the kept
// verdicts the start relied on.
type probes struct {
	self  string
	fresh bool
	base  string // the runtime folder the verdicts are kept in
	mu    sync.Mutex
	used  []string
}

// trust says whether the verdict under key is kept, and notes its use.
func (p *probes) trust(keys ...string) bool {
	if p.fresh || slices.Contains(keys, "") {
		return false
	}
	lines, ok := probesKept.Read(p.base)
	if !ok {
		return false
	}
	for _, k := range keys {
		if _, ok := probesKept.Find(lines, k); !ok {
			return false
		}
	}
	p.mu.Lock()
	p.used = append(p.used, keys...)
	p.mu.Unlock()
	return true
}

// keep keeps the verdict that the kernel allowed what key names.
func (p *probes) keep(key string) {
	if key != "" {
		probesKept.Keep(p.base, probeVerdict{Key: key})
	}
}

// relied says whether the start relied on a kept verdict.
func (p *probes) relied() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.used) > 0
}

// forget removes the kept verdicts the start relied on.
func (p *probes) forget() {
	p.mu.Lock()
	used := p.used
	p.used = nil
	p.mu.Unlock()
	if len(used) > 0 {
		probesKept.Forget(p.base, used...)
	}
}

// userNamespace is probeUserNamespace's verdict, kept.
func (p *probes) userNamespace() error {
	if !layout.UserNamespace() {
		return nil
	}
	key := userNamespaceKey()
	if p.trust(key) {
		return nil
	}
	err := probeUserNamespace(p.self)
	if err == nil {
		p.keep(key)
	}
	return err
}

// overlays is probeOverlays's verdict on overlays, kept: where each is
// kept as allowed, none is probed. probed says the probe ran (and
// mounted each overlay it allowed).
func (p *probes) overlays(overlays []plan.Overlay, dir string, tmpfs uint64) (refused []string, probed bool) {
	keys := make([]string, len(overlays))
	for i, o := range overlays {
		keys[i] = overlayKey(o, tmpfs > 0)
	}
	if p.trust(keys...) {
		return make([]string, len(overlays)), false
	}
	refused = probeOverlays(p.self, plan.Files{Overlays: overlays, OverlayDir: dir, OverlayMemory: tmpfs})
	for i, why := range refused {
		if why == "" {
			p.keep(keys[i])
		}
	}
	return refused, true
}
