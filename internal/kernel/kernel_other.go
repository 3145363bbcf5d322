//go:build !linux

package kernel

import (
	"runtime"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// On an OS other than Linux none of this package's layers exists: no
// Landlock, no seccomp, no /proc to read descriptors back from. Each
// function here says so, with a stable code, and restricts nothing; none
// pretends to enforce. What a session there relies on instead is its
// own (macOS: the Seatbelt profile, internal/session/seatbelt).

// notAvailable is the error of a layer this OS does not have, FS_IO: the
// caller asked for a mechanism that is not there, as on a Linux kernel
// without it (internal/session/child's "landlock is not available").
func notAvailable(layer string) error {
	return fserr.New(fserr.IO, layer+" is not available on "+runtime.GOOS)
}

// ABI is 0 here: there is no Landlock.
func ABI() int { return 0 }

// ScopesHeld is false here: there is no Landlock to scope a session's
// tree with.
func ScopesHeld(abi int) bool { return false }

// SeccompSupported is false here: there is no seccomp.
func SeccompSupported() bool { return false }

// RestrictProcessWrites restricts nothing here and says so (FS_IO): the
// file tool's kernel layer is Landlock's.
func RestrictProcessWrites(dirs, devices []string) error { return notAvailable("landlock") }

// SocketsRuleset readies nothing here and says so (FS_IO).
func SocketsRuleset(grants []string) (int, error) { return -1, notAvailable("landlock") }

// ProcRoot is the error that says there is no /proc to verify here.
func ProcRoot() (int, error) { return -1, notAvailable("/proc") }

// OpenedPath is the error that says there is no /proc to read a
// descriptor back from here; the fence's read-back on this OS is its
// own (fcntl F_GETPATH on macOS).
func OpenedPath(fd int) (string, error) { return "", notAvailable("/proc") }

// WSL is 0 here: this is no Linux kernel, in WSL or elsewhere.
func WSL() int { return 0 }
