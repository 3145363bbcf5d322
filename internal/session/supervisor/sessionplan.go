package supervisor

import (
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// SessionPlan is the plan a session of s would apply, computed without
// starting one, for policy to show (policy --format sbpl): the writable
// roots (NewRecord's), the file view (layout.PlanMounts: read-only,
// hidden and pinned paths), the unix sockets allow_unix_sockets grants
// (layout.SocketGrants), and the network. It has no command, no caches
// (the toolchains are asked at a session's start), no terminal and no
// descriptors; where the network is an allowlist, ProxyFD is -1, standing
// for the channel to the proxy a session makes at its start, and
// ProxyPort is 0, the proxy having no port yet. It starts nothing and
// writes nothing: no record, no placeholder, no tree index kept.
func SessionPlan(s *config.Settings) (*plan.Plan, error) {
	p := s.Policy
	roots, err := sandbox.NewFence(p).Roots()
	if err != nil {
		return nil, err
	}
	full := p.Mode == policy.DangerFullAccess
	pl := &plan.Plan{RestrictWrites: !full, Writable: NewRecord(s, roots).Roots, Unprivileged: true, Init: true,
		Ctty: -1, Network: p.Network != policy.NetworkOn}
	if !full {
		m := layout.PlanMounts(p, roots)
		pl.Files, pl.Sockets = &m.Files, layout.SocketGrants(p)
		if pl.Sockets == nil {
			pl.Sockets = []string{}
		}
	}
	if p.Network == policy.NetworkAllowlist {
		pl.ProxyFD = -1
	}
	return pl, nil
}
