package kernel

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// uringSetup makes an io_uring and closes it.
func uringSetup() error {
	var params [120]byte
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	return nil
}

// TestSessionCallsFilters: readying the filter installs nothing; in a
// child that installs it as a session's first process does, the keyring
// calls fail with EPERM, and io_uring_setup too unless it is allowed;
// other calls still work.
func TestSessionCallsFilters(t *testing.T) {
	if os.Getenv("CALLS_CHILD") != "" {
		t.Skip("in the child")
	}
	if !SeccompSupported() {
		t.Skip("this kernel has no seccomp")
	}
	uringHere := uringSetup() == nil
	for _, allowUring := range []bool{false, true} {
		progs, err := SessionCallsFilters(allowUring)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false); errors.Is(err, unix.EPERM) {
			t.Errorf("keyctl after readying the filter: %v", err)
		}
		runInstalled(t, rawinit.Layers{Filters: progs}, -1, "TestSessionCallsFiltersChild", "CALLS_CHILD=1",
			"CALLS_URING="+strconv.FormatBool(allowUring), "CALLS_URING_HERE="+strconv.FormatBool(uringHere))
	}
}

// TestSessionCallsFiltersChild is TestSessionCallsFilters' child, under
// the filter since before it started: io_uring allowed as CALLS_URING
// says, and made in the parent as CALLS_URING_HERE says.
func TestSessionCallsFiltersChild(t *testing.T) {
	if os.Getenv("CALLS_CHILD") == "" {
		t.Skip("run by TestSessionCallsFilters")
	}
	allowUring, uringHere := os.Getenv("CALLS_URING") == "true", os.Getenv("CALLS_URING_HERE") == "true"
	if _, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false); !errors.Is(err, unix.EPERM) {
		t.Errorf("keyctl: %v, want EPERM", err)
	}
	if _, err := unix.AddKey("user", "dshfs-test", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING); !errors.Is(err, unix.EPERM) {
		t.Errorf("add_key: %v, want EPERM", err)
	}
	if _, err := unix.RequestKey("user", "dshfs-test", "", unix.KEY_SPEC_SESSION_KEYRING); !errors.Is(err, unix.EPERM) {
		t.Errorf("request_key: %v, want EPERM", err)
	}
	err := uringSetup()
	switch {
	case !allowUring && !errors.Is(err, unix.EPERM):
		t.Errorf("io_uring_setup: %v, want EPERM", err)
	case allowUring && uringHere && err != nil:
		t.Errorf("io_uring_setup allowed: %v", err)
	}
	if unix.Getpid() <= 0 {
		t.Errorf("getpid under the filter")
	}
}

// TestRefuseCallsProgram: the filter assembles, for this architecture,
// with and without io_uring's calls.
func TestRefuseCallsProgram(t *testing.T) {
	arch, ok := nativeSeccompArch()
	if !ok {
		t.Skipf("no seccomp architecture for %s", runtime.GOARCH)
	}
	for _, calls := range [][]uint32{keyringCalls, append(append([]uint32{}, keyringCalls...), ioUringCalls...)} {
		if _, err := refuseCallsProgram(arch, calls); err != nil {
			t.Errorf("%v: %v", calls, err)
		}
	}
}
