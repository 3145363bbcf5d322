package supervisor

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// SessionPlan is the plan a session of s would apply, computed without
// starting one, for policy to show (--format sbpl): the writable roots,
// the file view (layout.PlanMounts and the read view), the sockets
// allow_unix_sockets grants, and the network. It has no command, caches
// (asked at a session's start), terminal or descriptors; for an
// allowlist, ProxyFD -1 stands for the proxy's channel and ProxyPort is
// 0, the proxy having no port yet. It starts and writes nothing: no
// record, no placeholder, no tree index kept.
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
		self, _ := os.Executable() // "": nothing of dsh-fs kept in the view
		m.PlanReadView(p, sandbox.RootPaths(roots), viewKeeps(self, nil))
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
