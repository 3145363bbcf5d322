package supervisor

import (
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// SessionPlan is the plan a Seatbelt session (macOS) of s would make its
// profile from, computed without starting one, for policy to show
// (--format sbpl): seatbeltPlan's, the one function a Mac session's
// start calls too, so what policy prints is what a session applies. It
// has no command, caches (asked at a session's start), runtime folder,
// terminal or environment; for an allowlist, ProxyFD -1 stands for the
// proxy and ProxyPort is 0, the proxy having no port yet. It starts and
// writes nothing.
func SessionPlan(s *config.Settings) (*plan.Plan, error) {
	p := s.Policy
	roots, err := sandbox.NewFence(p).Roots()
	if err != nil {
		return nil, err
	}
	pl, err := seatbeltPlan(p, NewRecord(s, roots), "", 0, nil, false)
	if err != nil {
		return nil, err
	}
	if pl.Network && p.Network == policy.NetworkAllowlist {
		pl.ProxyFD = -1
	}
	return pl, nil
}
