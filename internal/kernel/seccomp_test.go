package kernel

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestRefuseTerminalInjection: once the filter is in place, TIOCSTI and
// TIOCLINUX fail with EPERM, also spelled with high bits set (the kernel
// ignores them), while other terminal ioctls still work. The filter is
// put on a thread of its own, which ends with the test.
func TestRefuseTerminalInjection(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	fd := slave.Fd()
	sti := func(req uint64) error {
		b := byte('x')
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(req), uintptr(unsafe.Pointer(&b))); e != 0 {
			return e
		}
		return nil
	}
	if os.Geteuid() == 0 {
		// Root may push into any terminal: the control that the
		// refusal below is the filter's.
		if err := sti(unix.TIOCSTI); err != nil {
			t.Fatalf("TIOCSTI before the filter: %v", err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := RefuseTerminalInjection(); err != nil {
			t.Errorf("RefuseTerminalInjection: %v", err)
			return
		}
		for _, tc := range []struct {
			name string
			req  uint64
		}{
			{"TIOCSTI", unix.TIOCSTI},
			{"TIOCSTI with high bits", 1<<32 | unix.TIOCSTI},
			{"TIOCLINUX", unix.TIOCLINUX},
			{"TIOCLINUX with high bits", 0xffffffff<<32 | unix.TIOCLINUX},
		} {
			if err := sti(tc.req); !errors.Is(err, unix.EPERM) {
				t.Errorf("%s: %v, want EPERM", tc.name, err)
			}
		}
		if _, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err != nil {
			t.Errorf("TIOCGWINSZ under the filter: %v", err)
		}
	}()
	<-done
}
