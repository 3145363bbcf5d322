package kernel

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Privileges is the privilege layer readied: what a thread drops from
// its bounding set, capabilities 0 to LastCap, the highest this kernel
// knows. Readying it drops nothing. The session's first process drops
// it (internal/session/rawinit): it, and what it executes, is left with
// no capability in any set and no_new_privs, so neither a set-user-ID
// program nor file capabilities give any back; uid 0 keeps its uid but
// loses what made it root.
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
