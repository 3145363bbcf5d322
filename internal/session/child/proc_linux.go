package child

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MountProc mounts a /proc of the session's PID namespace over /proc, in
// the session's mount namespace: ps and kill see the session's processes
// only. The supervisor's user-namespace probe tries it too.
func MountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}
