package supervisor

import (
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// The layers of a session on macOS (docs/design.md §10): the session's
// plan is the same as on Linux, but one mechanism holds it, the Seatbelt
// profile sandbox-exec applies to CMD and every process it starts
// (internal/session/seatbelt). There is no Landlock, no mount layer, no
// PID namespace, no network namespace and no seccomp. What the profile
// cannot hold is said as not held, with why, so policy never claims a
// layer macOS does not have.

// seatbeltHeld says whether a session of p runs under a profile at all:
// danger-full-access asks for no sandbox, enforce: off for no kernel
// layer.
func seatbeltHeld(p policy.Policy) bool {
	return p.Mode != policy.DangerFullAccess && p.Enforce != policy.EnforceOff
}

// SeatbeltLayers fills shell with what holds for the shell of a session
// of p started under Seatbelt (macOS); terminal says one of exec's streams
// is a terminal. It takes the OS as given, not as found, so it is the
// same on every OS and a test on Linux reads what a Mac session records.
// The caches and the git guard are the supervisor's own, as on Linux,
// and are not set here.
func SeatbeltLayers(p policy.Policy, terminal bool, shell *wire.Shell) {
	held := seatbeltHeld(p)
	shell.Sandbox = ""
	shell.Landlock, shell.Scoped, shell.Mounts = 0, false, nil
	shell.Kernel = "macOS has no Landlock"
	shell.MountsWhy = "macOS has no mount namespace"
	shell.Privileges = wire.PrivilegesKept
	why := "danger-full-access mode"
	if p.Enforce == policy.EnforceOff && p.Mode != policy.DangerFullAccess {
		why = "enforce: off"
	}
	if held {
		shell.Sandbox = wire.SandboxSeatbelt
		shell.Kernel = "macOS has no Landlock: the Seatbelt profile fences the writes instead"
		shell.MountsWhy = "macOS has no mount namespace: the Seatbelt profile denies the protected paths instead" + seatbeltDenyText(p)
		shell.Privileges = wire.PrivilegesSeatbelt
	}
	shell.OutsideReadOnlyHeld, shell.OutsideReadOnly = seatbeltOutside(p, held, why)
	shell.SocketsHeld, shell.Sockets = held, "connecting to a unix socket is refused by the Seatbelt profile; "+socketsAllowedText(p)
	if !held {
		shell.Sockets = "not held for the shell: " + why
	}
	shell.NetworkNamespaced = false
	shell.NetworkHeld, shell.Network = seatbeltNetwork(p, held, why)
	shell.TerminalHeld, shell.Terminal = true, seatbeltTerminal(terminal)
	shell.ProcessesHeld = false
	shell.Processes = "not held: macOS has no PID namespace; when CMD exits, exec kills its process group, " +
		"but a process that left the group (setsid, setpgid) outlives the session, under the profile still"
}

// seatbeltDenyText says how a Seatbelt session of p holds its deny_read
// globs: each on every path by a regex of the profile, but those no
// regex can carry (seatbelt.GlobRegex), held only where the plan found
// their files in the writable roots and protected trees.
func seatbeltDenyText(p policy.Policy) string {
	globs, shown := sandbox.NewFence(p).DenyReadGlobs()
	if len(globs) == 0 {
		return ""
	}
	var held, not []string
	for i, g := range globs {
		_, why, ok := seatbelt.GlobRegex(g, seatbelt.Realpath(seatbelt.ResolveAsMac).Resolve)
		switch {
		case ok && !slices.Contains(held, shown[i]):
			held = append(held, shown[i])
		case !ok && !slices.Contains(not, shown[i]+" ("+why+")"):
			not = append(not, shown[i]+" ("+why+")")
		}
	}
	text := ""
	if len(held) > 0 {
		text = ", and denies reading or writing what the deny_read globs " + strings.Join(held, ", ") + " cover on every path, by a regex each"
	}
	if len(not) > 0 {
		text += "; not held on every path, but only where the plan found their files: " + strings.Join(not, "; ")
	}
	return text
}

// seatbeltOutside is the outside-read-only line of a Seatbelt session.
func seatbeltOutside(p policy.Policy, held bool, why string) (bool, string) {
	if !held {
		return false, "not held for the shell: " + why
	}
	if p.Mode == policy.ReadOnly {
		return true, "everything is read-only (the Seatbelt profile allows no file-write), metadata included"
	}
	return true, "read-only outside the writable roots (the Seatbelt profile allows file-write beneath them alone), " +
		"metadata included; protected paths inside them are denied, and their folders pinned against moves, by later rules"
}

// seatbeltNetwork is the network line of a Seatbelt session.
func seatbeltNetwork(p policy.Policy, held bool, why string) (bool, string) {
	switch {
	case p.Network == policy.NetworkOn:
		return true, "on: the host's network, every address it reaches"
	case !held:
		return false, "not held for the shell: " + why
	case p.Network == policy.NetworkAllowlist:
		allow := "no host"
		if len(p.NetworkAllow) > 0 {
			allow = strings.Join(p.NetworkAllow, ", ")
		}
		return true, "allowlist: the Seatbelt profile allows only the session's proxy on 127.0.0.1, which reaches " + allow +
			"; com.apple.trustd.agent is reachable too (Go's TLS asks it on macOS), a way out that does not pass the proxy"
	}
	return true, "off: the Seatbelt profile allows no network, loopback included"
}

// seatbeltTerminal is the terminal line of a Seatbelt session; terminal
// says one of exec's streams is a terminal.
func seatbeltTerminal(terminal bool) string {
	const inject = "; TIOCSTI is not refused (macOS has no seccomp), but the session holds only its own terminal, " +
		"and the person's can be opened by name (/dev/ttysN) only where the profile allows it"
	if terminal {
		return "a pseudo-terminal of the session's own, in a new session, relayed to the person's terminal through a filter that " +
			"passes what draws on the screen and drops the rest; the supervisor's question pauses the relay and takes the screen" + inject
	}
	return "no terminal among exec's streams: a new session without a controlling terminal, the streams as they are" + inject
}
