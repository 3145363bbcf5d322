package supervisor

import (
	"path/filepath"

	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// seatbeltLayersPlan is the plan of the layers of a Seatbelt session of p
// whose record is rec, as the record keeps it: the writable roots and
// caches, the sockets allow_unix_sockets grants, and whether the network
// is fenced; no CMD, no file view.
func seatbeltLayersPlan(p policy.Policy, rec *wire.Record) *plan.Plan {
	held := seatbeltHeld(p)
	var sockets []string
	if held {
		sockets = append([]string{}, layout.SocketGrants(p)...)
	}
	return &plan.Plan{RestrictWrites: held, Writable: rec.Roots, Sockets: sockets,
		Caches: writableCaches(rec.Shell.Caches), Unprivileged: held, Ctty: -1,
		Network: held && p.Network != policy.NetworkOn}
}

// seatbeltPlan is the plan a Seatbelt session (macOS) of p makes its
// profile from, without CMD, and the one policy prints (SessionPlan):
// seatbeltLayersPlan's, with the file view (what the mount plan finds;
// every deny_read glob, which the profile matches on any path; exec's
// runtime folder hidden but for the record in dir and its denials), the
// proxy's loopback port (0 for none) and CMD's environment env, its
// proxy variables set to that port or removed where the network is
// fenced with no proxy (kept from the outer session where nested). It is
// the same on every OS, so a test on Linux reads what a Mac applies.
func seatbeltPlan(p policy.Policy, rec *wire.Record, dir string, proxyPort int, env []string, nested bool) (*plan.Plan, error) {
	pl := seatbeltLayersPlan(p, rec)
	if seatbeltHeld(p) {
		roots, err := sandbox.NewFence(p).Roots()
		if err != nil {
			return nil, err
		}
		m := layout.PlanMounts(p, roots)
		if dir != "" {
			m.Runtime, m.Record = filepath.Dir(dir), wire.RecordPath(dir)
		}
		// Seatbelt matches every deny_read glob on every path itself
		// (seatbelt's regexes): no read view, and no glob left to walks.
		m.Files.DenyGlobs, _ = sandbox.NewFence(p).DenyReadGlobs()
		pl.Files = &m.Files
	}
	switch {
	case proxyPort != 0:
		pl.ProxyFD, pl.ProxyPort = -1, proxyPort // no channel: the shell reaches the port
		env = bridge.Env(env, proxyPort)
	case pl.Network && !nested:
		env = bridge.WithoutProxyVars(env)
	}
	pl.Env = env
	return pl, nil
}
