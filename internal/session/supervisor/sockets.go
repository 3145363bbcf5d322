package supervisor

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// shellSockets says whether the socket layer holds for the shell of a
// session under p whose mount layer is m (nil without one, mountsWhy
// then says why), and what it is (docs/design.md §10): what exec stores
// in the record as sockets_held and sockets.
func shellSockets(p policy.Policy, m *layout.MountPlan, mountsWhy string) (bool, string) {
	allowed := socketsAllowedText(p)
	switch {
	case p.Mode == policy.DangerFullAccess:
		return false, "not held for the shell: danger-full-access mode"
	case layout.SocketLandlock(p):
		abi, _, _ := layout.TreeLayer(p)
		return true, fmt.Sprintf("Landlock ABI %d: no unix socket made outside the session is reachable; %s", abi, allowed)
	case m != nil && m.SocketsUnread != "":
		return false, "not held for the shell: the kernel's list of bound unix sockets could not be read (" + m.SocketsUnread +
			"), and this kernel's Landlock has no socket right (ABI 9); " + allowed
	case m != nil:
		text := fmt.Sprintf("%d unix sockets bound outside the session at its start (the kernel's list of exec's network namespace) "+
			"are hidden; %s; a socket bound outside later, or in another network namespace, is reachable "+
			"(this kernel's Landlock has no socket right, ABI 9)", len(m.HiddenSockets), allowed)
		if len(m.SocketsLeft) > 0 {
			text += "; not covered: " + strings.Join(m.SocketsLeft, ", ")
		}
		if m.SocketsOpen() {
			return false, "not held for the shell: " + text
		}
		return true, text
	}
	return false, "not held for the shell: " + mountsWhy + ", and this kernel's Landlock has no socket right (ABI 9)"
}

// SocketsOutsideText says, outside a session, what dsh-fs exec would do
// with the unix sockets outside its session on this machine.
func SocketsOutsideText(p policy.Policy) string {
	would := "dsh-fs exec would hide the unix sockets that exist at its start here; " + socketsAllowedText(p)
	switch {
	case p.Mode == policy.DangerFullAccess:
		would = "dsh-fs exec could not: danger-full-access mode"
	case layout.SocketLandlock(p):
		abi, _, _ := layout.TreeLayer(p)
		would = fmt.Sprintf("dsh-fs exec would refuse them with Landlock ABI %d here; %s", abi, socketsAllowedText(p))
	default:
		if ok, why := layout.MountLayer(); !ok {
			would = "dsh-fs exec could not: " + why
		}
	}
	return "not held for the shell: no dsh-fs exec session (" + would + ")"
}

// socketsAllowedText names the sockets allow_unix_sockets leaves
// reachable.
func socketsAllowedText(p policy.Policy) string {
	if len(p.AllowUnixSockets) == 0 {
		return "none allowed (allow_unix_sockets)"
	}
	return "allowed (allow_unix_sockets): " + strings.Join(p.AllowUnixSockets, ", ")
}

// viewKeeps are the places outside the roots a session's read view binds
// back besides the trusted read_home (plan.ReadView): the caches the
// session uses, and dsh-fs itself, which the shell runs again. Not the
// whole of $XDG_CACHE_HOME, the caches layer's catch-all: the view shows
// the toolchains' own caches within it, and no other program's files
// there (an unanchored deny_read glob such as **/.env is not enforced
// in what the view binds back).
func viewKeeps(self string, caches []plan.Cache) []string {
	keep := []string{self}
	for _, c := range caches {
		if !strings.HasPrefix(c.Source, "XDG_CACHE_HOME") {
			keep = append(keep, c.Path)
		}
	}
	return keep
}
