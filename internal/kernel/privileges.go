package kernel

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DropPrivileges leaves this thread, and what it executes next, with no
// capability in any set and no_new_privs, so neither a set-user-ID program
// nor file capabilities give any back; uid 0 keeps its uid but loses what
// made it root. Capabilities are a thread's: exec's child calls it last,
// on the thread that executes CMD. Emptying the bounding set needs
// CAP_SETPCAP (root, or the user namespace of the mount layer); without it
// the set stays, and with no_new_privs nothing can raise a capability
// from it. It reports whether the bounding set is empty. It is
// PrivilegesToDrop, then Privileges.Drop.
func DropPrivileges() (bounded bool, err error) {
	p, err := PrivilegesToDrop()
	if err != nil {
		return false, err
	}
	return p.Drop()
}

// Privileges is the privilege layer readied: what a thread drops from
// its bounding set, capabilities 0 to LastCap, the highest this kernel
// knows. Readying it drops nothing.
type Privileges struct {
	LastCap int
}

// PrivilegesToDrop readies the privilege layer on this kernel, dropping
// nothing.
func PrivilegesToDrop() (Privileges, error) {
	last, err := lastCap()
	if err != nil {
		return Privileges{}, err
	}
	return Privileges{LastCap: last}, nil
}

// Drop drops p on the calling thread, as DropPrivileges says, for good;
// the caller has locked its goroutine to the thread, which then executes
// what is to run without them.
func (p Privileges) Drop() (bounded bool, err error) {
	bounded = true
	for c := 0; c <= p.LastCap; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if !errors.Is(err, unix.EPERM) {
				return false, fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
			bounded = false
			break
		}
	}
	if bounded {
		// uid 0 is given no capability at an execve, and none can be
		// made ambient again; locked, so nothing undoes it.
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, LockedSecurebits, 0, 0, 0); err != nil {
			return false, fmt.Errorf("securebits: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("capget: %w", err)
	}
	if data[0].Inheritable|data[1].Inheritable != 0 {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return false, fmt.Errorf("clear inheritable capabilities: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("no_new_privs: %w", err)
	}
	return bounded, nil
}

// LockedSecurebits are the securebits Privileges.Drop sets once the
// bounding set is empty (linux/securebits.h, which x/sys lacks): uid 0 gains
// nothing at an execve (noroot), keep_caps stays off, and no capability
// can be raised to the ambient set; each locked.
const LockedSecurebits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// lastCap is the highest capability this kernel knows.
func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		// Older kernels without the file: probe the bounding set.
		for c := 0; c < 64; c++ {
			if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil {
				return c - 1, nil
			}
		}
		return 63, nil
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
