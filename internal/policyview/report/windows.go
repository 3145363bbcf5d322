package report

import (
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
)

// windowsNoExec says why the shell is not fenced on Windows and what to
// do: dsh-fs exec does not run there (docs/design.md §10, On Windows).
const windowsNoExec = "dsh-fs exec does not run on Windows; " + supervisor.WSL2Hint

// noExecOn says why dsh-fs exec cannot run on the OS goos at all, ""
// where it can.
func noExecOn(goos string) string {
	if goos == "windows" {
		return windowsNoExec
	}
	return ""
}

// windowsWould describes the shell's fence under s on Windows: nothing
// holds for the shell, since dsh-fs exec does not run there; the file
// tool (dsh-fs's calls, dsh-fs mcp) holds the fence for its own calls.
func windowsWould(s *config.Settings) ShellLayers {
	not := "not held for the shell: " + windowsNoExec
	tool := "writes only beneath the writable roots, never to a protected path"
	if s.Policy.Mode == policy.ReadOnly {
		tool = "no writes"
	} else if s.Policy.Mode == policy.DangerFullAccess {
		tool = "writes anywhere (danger-full-access mode)"
	}
	l := ShellLayers{Escalation: "none for the shell; dsh-fs calls escalate as the approval says"}
	l.Writes = "not fenced: " + windowsNoExec + "; the file tool holds the fence for its own calls only: " + tool
	l.Protected, l.DenyRead, l.OutsideReadOnly = not, not, not
	l.Privileges, l.Scopes, l.Sockets, l.Network = not, not, not, not
	l.Terminal, l.Processes, l.Git, l.Caches = not, not, not, not
	l.CacheList = []plan.Cache{}
	return l
}
