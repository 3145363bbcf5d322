package report

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// ShellLayers says, per layer, what holds for the model's shell: inside a
// dsh-fs exec session what exec applied, outside one nothing, and what
// exec would apply on this machine (docs/design.md §10).
type ShellLayers struct {
	// Session is the record of the session this call runs in; "" outside
	// one.
	Session       string `json:"session"`
	WritesFenced  bool   `json:"writes_fenced"`
	Writes        string `json:"writes,omitempty"`
	ProtectedHeld bool   `json:"protected_held"`
	Protected     string `json:"protected,omitempty"`
	DenyReadHeld  bool   `json:"deny_read_held"`
	DenyRead      string `json:"deny_read,omitempty"`
	// SocketsHeld says no unix socket outside the session but the
	// allowed ones is reachable from the shell; Sockets says how.
	SocketsHeld bool   `json:"sockets_held"`
	Sockets     string `json:"sockets,omitempty"`
	// NetworkHeld says the shell reaches over the network only what the
	// network setting allows; Network says how (exec_network.go).
	NetworkHeld bool   `json:"network_held"`
	Network     string `json:"network,omitempty"`
	// OutsideReadOnlyHeld says everything outside the writable roots is
	// read-only for the shell, metadata included (the mount layer's
	// read-only tree); OutsideReadOnly says what holds, or why not.
	OutsideReadOnlyHeld bool   `json:"outside_read_only_held"`
	OutsideReadOnly     string `json:"outside_read_only,omitempty"`
	Escalation          string `json:"escalation,omitempty"`
	// TerminalHeld says the session's shell never holds the person's
	// terminal (its own pseudo-terminal, TIOCSTI refused);
	// ProcessesHeld that nothing it started outlives it.
	TerminalHeld  bool   `json:"terminal_held"`
	Terminal      string `json:"terminal,omitempty"`
	ProcessesHeld bool   `json:"processes_held"`
	Processes     string `json:"processes,omitempty"`
	// GitHeld says code planted in a git directory during the session is
	// neutralized when it ends (the git guard).
	GitHeld bool   `json:"git_held"`
	Git     string `json:"git,omitempty"`
	// Mounts are the paths the session's mount layer covers; null
	// without one.
	Mounts         *layout.MountPlan `json:"mounts"`
	PrivilegesHeld bool              `json:"privileges_held"`
	Privileges     string            `json:"privileges,omitempty"`
	ScopesHeld     bool              `json:"scopes_held"`
	Scopes         string            `json:"scopes,omitempty"`
	// CachesHeld says the toolchain caches are writable for the shell
	// without the person's own changing (a copy-on-write overlay, or a
	// writable root); Caches says how, or why not, and CacheList how
	// the shell sees each cache ([] outside a session).
	CachesHeld bool         `json:"caches_held"`
	Caches     string       `json:"caches,omitempty"`
	CacheList  []plan.Cache `json:"cache_list"`
}

// newShellLayers describes the shell's fence under s on this OS.
func newShellLayers(s *config.Settings) ShellLayers { return newShellLayersOn(runtime.GOOS, s) }

// newShellLayersOn describes the shell's fence under s on the OS goos:
// outside a session, what dsh-fs exec would hold there (on macOS, with
// the Seatbelt profile: seatbeltWould; on Windows nothing:
// windowsWould); inside one, what its record says.
func newShellLayersOn(goos string, s *config.Settings) ShellLayers {
	p := s.Policy
	rec := s.Session
	if rec == nil && goos == "darwin" {
		return seatbeltWould(s)
	}
	if goos == "windows" {
		return windowsWould(s)
	}
	if rec == nil {
		return linuxWould(s)
	}
	l := ShellLayers{Session: s.SessionPath, Mounts: rec.Shell.Mounts,
		OutsideReadOnlyHeld: rec.Shell.OutsideReadOnlyHeld, OutsideReadOnly: rec.Shell.OutsideReadOnly}
	seatbelt := rec.Shell.Sandbox == wire.SandboxSeatbelt
	switch {
	case seatbelt:
		l.WritesFenced, l.Writes = true, "the Seatbelt profile: writes only beneath "+strings.Join(rec.Roots, ", ")
		if len(rec.Roots) == 0 {
			l.Writes = "the Seatbelt profile: no writes"
		}
	case rec.Shell.Landlock == 0:
		l.Writes = "not fenced: " + rec.Shell.Kernel
	case len(rec.Roots) == 0:
		l.WritesFenced, l.Writes = true, fmt.Sprintf("Landlock ABI %d: no writes but the terminal and null devices", rec.Shell.Landlock)
	default:
		l.WritesFenced, l.Writes = true, fmt.Sprintf("Landlock ABI %d: writes only beneath %s and to the terminal and null devices", rec.Shell.Landlock, strings.Join(rec.Roots, ", "))
	}
	if m := rec.Shell.Mounts; m != nil {
		l.ProtectedHeld, l.Protected = true, fmt.Sprintf("%d protected paths that existed at the start are bound read-only", len(m.ReadOnly))
		l.DenyReadHeld, l.DenyRead = true, fmt.Sprintf("%d deny_read paths that existed at the start are hidden", len(m.Hidden)+len(m.HiddenFiles))
		unsearched := mountsUnsearchedText(m)
		l.Protected += unsearched
		l.DenyRead += unsearched
		l.DenyRead += m.ReadViewText()
	} else if seatbelt {
		l.ProtectedHeld, l.Protected = true, seatbeltProtected
		l.DenyReadHeld, l.DenyRead = true, seatbeltDenyRead
	} else {
		l.Protected = "not held for the shell: " + rec.Shell.MountsWhy
		l.DenyRead = "not held for the shell: " + rec.Shell.MountsWhy
	}
	l.PrivilegesHeld = rec.Shell.Privileges == wire.PrivilegesNone
	l.Privileges = privilegesText(rec.Shell.Privileges)
	l.ScopesHeld = rec.Shell.Scoped
	l.Scopes = scopesText(rec.Shell.Landlock, "no signal and no abstract unix socket reaches a process outside the session")
	if !rec.Shell.Scoped && rec.Shell.Landlock == 0 {
		l.Scopes = "not held: " + rec.Shell.Kernel
	}
	if seatbelt {
		l.Scopes = seatbeltScopes
	}
	l.SocketsHeld, l.Sockets = rec.Shell.SocketsHeld, rec.Shell.Sockets
	l.NetworkHeld, l.Network = supervisor.NetworkRecordText(rec.Shell)
	if l.Sockets == "" {
		l.Sockets = "not held for the shell: the session's record says nothing of sockets"
	}
	l.TerminalHeld, l.Terminal = rec.Shell.TerminalHeld, rec.Shell.Terminal
	l.ProcessesHeld, l.Processes = rec.Shell.ProcessesHeld, rec.Shell.Processes
	l.GitHeld, l.Git = rec.Shell.GitHeld, rec.Shell.Git
	if l.Git == "" {
		l.Git = "not held: the session's supervisor has no git guard"
	}
	l.CachesHeld, l.Caches = supervisor.CachesText(rec.Shell.Caches)
	l.CacheList = nonNilSlice(rec.Shell.Caches)
	l.Escalation = "none"
	if rec.Shell.Broker {
		l.Escalation = "--escalate is sent to the dsh-fs exec supervisor, whose approval (" + string(p.Approval) + ") decides"
	}
	return l
}

// linuxWould describes the shell's fence under s outside a session on
// Linux: nothing holds, and each line says what dsh-fs exec would hold
// on this machine, or why it could not.
func linuxWould(s *config.Settings) ShellLayers {
	p := s.Policy
	l := ShellLayers{Escalation: "none for the shell; dsh-fs calls escalate as the approval says"}
	abi, why, err := layout.TreeLayer(p)
	scopes := "dsh-fs exec could not: " + why
	if abi > 0 {
		scopes = scopesText(abi, "dsh-fs exec would scope them here")
	}
	switch {
	case err != nil:
		why = err.Error()
	case abi > 0:
		why = fmt.Sprintf("dsh-fs exec would apply Landlock ABI %d here", abi)
	default:
		why = "dsh-fs exec could not: " + why
	}
	l.Writes = "not fenced: no dsh-fs exec session (" + why + ")"
	mounts := "dsh-fs exec would bind them read-only here"
	if ok, why := layout.MountLayer(); !ok {
		mounts = "dsh-fs exec could not: " + why
	}
	l.Protected = "not held for the shell: no dsh-fs exec session (" + mounts + ")"
	l.DenyRead = "not held for the shell: no dsh-fs exec session (" + strings.Replace(mounts, "bind them read-only", "hide them", 1) + ")"
	l.Privileges = "not held for the shell: no dsh-fs exec session (dsh-fs exec would leave it " +
		privilegesText(supervisor.Privileges(p, layout.UserNamespace() && func() bool { ok, _ := layout.MountLayer(); return ok }())) + ")"
	l.Scopes = "not held for the shell: no dsh-fs exec session (" + scopes + ")"
	l.Sockets = supervisor.SocketsOutsideText(p)
	l.Network = supervisor.NetworkOutsideText(p)
	outside := "dsh-fs exec would make everything outside the writable roots read-only here"
	if ok, why := layout.MountLayer(); !ok {
		outside = "dsh-fs exec could not: " + why
	} else if ok, why := layout.ReadOnlyTree(); !ok {
		outside = "dsh-fs exec could not: " + why
	}
	l.OutsideReadOnly = "not held for the shell: no dsh-fs exec session (" + outside + ")"
	l.Terminal = "not held for the shell: no dsh-fs exec session (" + wouldTerminal() + ")"
	processes := "dsh-fs exec would give it a PID namespace here"
	if ok, why := layout.MountLayer(); !ok {
		processes = "dsh-fs exec could not: " + why
	}
	l.Processes = "not held for the shell: no dsh-fs exec session (" + processes + ")"
	git := "dsh-fs exec would neutralize code-running git parts planted in the writable roots here"
	if p.Mode == policy.DangerFullAccess {
		git = "dsh-fs exec would not: danger-full-access mode"
	}
	l.Git = "not held for the shell: no dsh-fs exec session (" + git + ")"
	l.Caches = "not held for the shell: no dsh-fs exec session (" + supervisor.WouldCaches(s) + ")"
	l.CacheList = []plan.Cache{}
	return l
}

// privilegesText says what a shell keeps of its privileges
// (wire.Shell.Privileges).
func privilegesText(p string) string {
	switch p {
	case wire.PrivilegesNone:
		return "no capability in any set (bounding and ambient included) and no_new_privs, as root too"
	case wire.PrivilegesSeatbelt:
		return "the privileges it has (macOS has no capability sets and no no_new_privs), under the Seatbelt profile, which every process it starts inherits, set-user-ID programs included, and none can lift"
	case wire.PrivilegesNoNewPrivs:
		return "no capability to use and no_new_privs; the bounding set is kept (a user that is not root, without a user namespace, cannot empty it)"
	}
	return "every privilege it has: danger-full-access mode"
}

// scopesText says what Landlock's scopes do at ABI abi, held saying
// what they do when they hold.
func scopesText(abi int, held string) string {
	if kernel.ScopesHeld(abi) {
		return held
	}
	if abi == 0 {
		return "this kernel has no Landlock"
	}
	return fmt.Sprintf("Landlock ABI %d has no scopes (6 or newer has): signals and abstract unix sockets reach outside", abi)
}

// wouldTerminal says what dsh-fs exec would do with the person's
// terminal on this machine.
func wouldTerminal() string {
	if !kernel.SeccompSupported() {
		return "dsh-fs exec could not: this kernel has no seccomp filters to refuse TIOCSTI"
	}
	return "dsh-fs exec would give the session a pseudo-terminal of its own and refuse TIOCSTI and TIOCLINUX here"
}

// mountsUnsearchedText is what the mount plan m says it did not search,
// for the protected and deny_read lines: places past a walk's budget,
// and folders dsh-fs could not read, hidden whole since what they hold
// was not judged. "" when it searched everything.
func mountsUnsearchedText(m *layout.MountPlan) string {
	text := ""
	if len(m.Partial) > 0 {
		text += "; not searched past the walk budget in " + strings.Join(m.Partial, ", ")
	}
	if len(m.Unreadable) > 0 {
		text += "; hidden whole, as dsh-fs could not read them: " + strings.Join(m.Unreadable, ", ")
	}
	return text
}
