package report

import (
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// What a session on macOS holds with its Seatbelt profile, in the
// lines a Linux session's mount layer and Landlock fill
// (supervisor.SeatbeltLayers has the rest).
const (
	seatbeltProtected = "protected paths denied for writing by the Seatbelt profile, the protected folder itself included, " +
		"and pinned against moves of it and its parents (file-write-unlink, file-write-create)"
	seatbeltDenyRead = "deny_read paths denied for reading and writing by the Seatbelt profile"
	seatbeltScopes   = "not held: macOS has no Landlock scopes; which processes a signal or a unix socket reaches outside the " +
		"session is the Seatbelt profile's to refuse"
)

// seatbeltWould describes the shell's fence under s outside a session on
// macOS: nothing holds, and each line says what dsh-fs exec would hold
// there with the Seatbelt profile, or why it could not.
func seatbeltWould(s *config.Settings) ShellLayers {
	p := s.Policy
	var sh wire.Shell
	supervisor.SeatbeltLayers(p, true, &sh)
	not := func(would string) string { return "not held for the shell: no dsh-fs exec session (" + would + ")" }
	held := sh.Sandbox == wire.SandboxSeatbelt
	could := "dsh-fs exec could not: " + string(p.Mode) + " mode"
	if p.Mode != policy.DangerFullAccess {
		could = "dsh-fs exec could not: enforce: off"
	}
	l := ShellLayers{Escalation: "none for the shell; dsh-fs calls escalate as the approval says"}
	l.Writes, l.Protected, l.DenyRead, l.OutsideReadOnly = not(could), not(could), not(could), not(could)
	if held {
		l.Writes = "not fenced: no dsh-fs exec session (dsh-fs exec would fence them with the Seatbelt profile here)"
		l.Protected = not("dsh-fs exec would hold them here: " + seatbeltProtected)
		l.DenyRead = not("dsh-fs exec would hold them here: " + seatbeltDenyRead)
		l.OutsideReadOnly = not("dsh-fs exec would hold it here: " + sh.OutsideReadOnly)
	}
	l.Privileges = not("dsh-fs exec would leave it " + privilegesText(sh.Privileges))
	l.Scopes = not("dsh-fs exec could not: macOS has no Landlock scopes")
	l.Sockets = not("dsh-fs exec would hold it here: " + sh.Sockets)
	l.Network = not("dsh-fs exec would hold it here: " + sh.Network)
	l.Terminal = not("dsh-fs exec would give the session " + sh.Terminal)
	l.Processes = not("dsh-fs exec could not: " + sh.Processes)
	git := "dsh-fs exec would neutralize code-running git parts planted in the writable roots here"
	if p.Mode == policy.DangerFullAccess {
		git = "dsh-fs exec would not: danger-full-access mode"
	}
	l.Git = not(git)
	l.Caches = not(supervisor.WouldCaches(s))
	l.CacheList = []plan.Cache{}
	return l
}
