package kernel

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
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

// TestRefuseSessionCalls: under the filter, installed by
// RefuseSessionCalls or readied by SessionCallsFilters and installed by
// InstallFilters, on a thread of its own, the keyring calls fail with
// EPERM, and io_uring_setup too unless it is allowed; other calls still
// work. Readying the filter installs nothing.
func TestRefuseSessionCalls(t *testing.T) {
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
		for _, tc := range []struct {
			name    string
			install func() error
		}{
			{"RefuseSessionCalls", func() error { return RefuseSessionCalls(allowUring) }},
			{"SessionCallsFilters then InstallFilters", func() error { return InstallFilters(progs) }},
		} {
			onThread(func() {
				if err := tc.install(); err != nil {
					t.Errorf("%s: %v", tc.name, err)
					return
				}
				if _, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false); !errors.Is(err, unix.EPERM) {
					t.Errorf("%s: keyctl: %v, want EPERM", tc.name, err)
				}
				if _, err := unix.AddKey("user", "dshfs-test", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING); !errors.Is(err, unix.EPERM) {
					t.Errorf("%s: add_key: %v, want EPERM", tc.name, err)
				}
				if _, err := unix.RequestKey("user", "dshfs-test", "", unix.KEY_SPEC_SESSION_KEYRING); !errors.Is(err, unix.EPERM) {
					t.Errorf("%s: request_key: %v, want EPERM", tc.name, err)
				}
				err := uringSetup()
				switch {
				case !allowUring && !errors.Is(err, unix.EPERM):
					t.Errorf("%s: io_uring_setup: %v, want EPERM", tc.name, err)
				case allowUring && uringHere && err != nil:
					t.Errorf("%s: io_uring_setup allowed: %v", tc.name, err)
				}
				if unix.Getpid() <= 0 {
					t.Errorf("%s: getpid under the filter", tc.name)
				}
			})
		}
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
