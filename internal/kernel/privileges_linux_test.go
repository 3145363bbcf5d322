package kernel

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// lockedSecurebits are the securebits a session's first process sets
// once its bounding set is empty (linux/securebits.h, which x/sys
// lacks): SECBIT_NOROOT, SECBIT_KEEP_CAPS_LOCKED and
// SECBIT_NO_CAP_AMBIENT_RAISE, each locked.
const lockedSecurebits = 1<<0 | 1<<1 | 1<<5 | 1<<6 | 1<<7

// TestPrivilegesToDrop: the readied layer names the kernel's highest
// capability and drops nothing; a child that drops it as a session's
// first process does holds, as root, an empty bounding set, the locked
// securebits and no_new_privs, while the test process keeps its own.
func TestPrivilegesToDrop(t *testing.T) {
	if os.Getenv("PRIVILEGES_CHILD") != "" {
		t.Skip("in the child")
	}
	last, err := capLastCap()
	if err != nil {
		t.Skipf("no cap_last_cap here: %v", err)
	}
	p, err := PrivilegesToDrop()
	if err != nil || p.LastCap != last {
		t.Fatalf("PrivilegesToDrop = %+v, %v; want LastCap %d", p, err, last)
	}
	if os.Geteuid() != 0 {
		t.Skip("an empty bounding set needs CAP_SETPCAP: run as root")
	}
	if !inBounding(unix.CAP_SYS_ADMIN) {
		t.Skip("this process's bounding set lacks CAP_SYS_ADMIN: nothing to show dropped")
	}
	runInstalled(t, rawinit.Layers{DropPrivileges: &rawinit.Privileges{LastCap: p.LastCap}}, -1,
		"TestPrivilegesToDropChild", "PRIVILEGES_CHILD=1")
	if !inBounding(unix.CAP_SYS_ADMIN) {
		t.Errorf("the process that started the child lost CAP_SYS_ADMIN from its bounding set")
	}
}

// TestPrivilegesToDropChild is TestPrivilegesToDrop's child, its
// privileges dropped before it started.
func TestPrivilegesToDropChild(t *testing.T) {
	if os.Getenv("PRIVILEGES_CHILD") == "" {
		t.Skip("run by TestPrivilegesToDrop")
	}
	last, err := capLastCap()
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c <= last; c++ {
		if inBounding(c) {
			t.Errorf("capability %d still in the bounding set", c)
		}
	}
	if bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err != nil || bits&lockedSecurebits != lockedSecurebits {
		t.Errorf("securebits %#x, %v; want %#x set", bits, err, lockedSecurebits)
	}
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		t.Errorf("no_new_privs %d, %v; want 1", nnp, err)
	}
}

// capLastCap is the kernel's highest capability, as its file says.
func capLastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// inBounding says whether capability c is in this thread's bounding set.
func inBounding(c int) bool {
	v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
	return err == nil && v == 1
}
