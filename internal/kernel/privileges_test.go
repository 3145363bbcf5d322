package kernel

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPrivilegesToDrop: the readied layer names the kernel's highest
// capability and drops nothing; a thread that drops it, readied or
// through DropPrivileges, holds an empty bounding set, the locked
// securebits and no_new_privs, as root, while the process's other
// threads keep theirs.
func TestPrivilegesToDrop(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		t.Skipf("no cap_last_cap here: %v", err)
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := PrivilegesToDrop()
	if err != nil || p.LastCap != last {
		t.Fatalf("PrivilegesToDrop = %+v, %v; want LastCap %d", p, err, last)
	}
	if os.Geteuid() != 0 {
		t.Skip("an empty bounding set needs CAP_SETPCAP: run as root")
	}
	inBounding := func(c int) bool {
		v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		return err == nil && v == 1
	}
	if !inBounding(unix.CAP_SYS_ADMIN) {
		t.Skip("this process's bounding set lacks CAP_SYS_ADMIN: nothing to show dropped")
	}
	for _, tc := range []struct {
		name string
		drop func() (bool, error)
	}{
		{"Privileges.Drop", p.Drop},
		{"DropPrivileges", DropPrivileges},
	} {
		onThread(func() {
			bounded, err := tc.drop()
			if err != nil || !bounded {
				t.Errorf("%s = %v, %v; want an empty bounding set", tc.name, bounded, err)
				return
			}
			for c := 0; c <= last; c++ {
				if inBounding(c) {
					t.Errorf("%s: capability %d still in the bounding set", tc.name, c)
				}
			}
			if bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err != nil || bits&LockedSecurebits != LockedSecurebits {
				t.Errorf("%s: securebits %#x, %v; want %#x set", tc.name, bits, err, LockedSecurebits)
			}
			if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
				t.Errorf("%s: no_new_privs %d, %v; want 1", tc.name, nnp, err)
			}
		})
	}
	if !inBounding(unix.CAP_SYS_ADMIN) {
		t.Errorf("a thread that dropped nothing lost CAP_SYS_ADMIN from its bounding set")
	}
}
