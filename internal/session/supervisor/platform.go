package supervisor

import (
	"runtime"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// WSL2Hint is what exec says to do where it cannot fence the shell on
// Windows: WSL2 runs a real Linux kernel, where every layer applies.
const WSL2Hint = "run dsh-fs inside WSL2, where the Linux build applies every layer (wsl --install, or wsl --set-version DISTRO 2)"

// wslRefusal is exec's refusal on WSL1 (wsl is kernel.WSL()): its kernel
// is Windows translating system calls, with no Landlock and no
// namespaces, so no layer of a session could hold and the shell would
// run unfenced. It is nil elsewhere, and where p asks for no fence
// (danger-full-access, enforce: off). FS_CONFIG_INVALID, as a layer the
// policy asks for that cannot be held here.
func wslRefusal(p policy.Policy, wsl int) error {
	if wsl != 1 || p.Mode == policy.DangerFullAccess || p.Enforce == policy.EnforceOff {
		return nil
	}
	return fserr.New(fserr.ConfigInvalid, "exec: this is WSL1, whose kernel has no Landlock and no namespaces, so dsh-fs exec cannot fence the shell here; "+WSL2Hint)
}

// Unavailable says why dsh-fs exec cannot run on this OS at all, nil
// where it can; exec asks before it reads any setting.
func Unavailable() error { return unavailableOn(runtime.GOOS) }

// unavailableOn is Unavailable on the OS goos: on Windows no layer of a
// session exists, and a shell started with none would be an unfenced
// shell that looks fenced (docs/design.md §10, On Windows).
// FS_CONFIG_INVALID, as wslRefusal.
func unavailableOn(goos string) error {
	if goos != "windows" {
		return nil
	}
	return fserr.New(fserr.ConfigInvalid, "exec: dsh-fs exec does not run on Windows, where no layer of a session exists to fence the shell; "+WSL2Hint)
}
