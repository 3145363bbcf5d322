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

// TestRefuseSessionCalls: under the filter, on a thread of its own, the
// keyring calls fail with EPERM, and io_uring_setup too unless it is
// allowed; other calls still work. The session keyring joined first is
// a new one.
func TestRefuseSessionCalls(t *testing.T) {
	if !SeccompSupported() {
		t.Skip("this kernel has no seccomp")
	}
	uringHere := uringSetup() == nil
	for _, allowUring := range []bool{false, true} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if err := RefuseSessionCalls(allowUring); err != nil {
				t.Errorf("RefuseSessionCalls: %v", err)
				return
			}
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
		}()
		<-done
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
