package kernel

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestRefuseTerminalInjection: once the filters are in place, installed
// by RefuseTerminalInjection or readied by TerminalInjectionFilters and
// installed in order by InstallFilters (as the session's PID 1 does),
// TIOCSTI and TIOCLINUX fail with EPERM, also spelled with high bits set
// (the kernel ignores them), while other terminal ioctls still work.
// Readying them installs nothing. Each install is on a thread of its
// own, which ends with the test.
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
	progs, err := TerminalInjectionFilters()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := compatArch(); ok && len(progs) != 2 {
		t.Errorf("%d programs, want the native one and the 32-bit ABI's", len(progs))
	}
	if os.Geteuid() == 0 {
		// Root may push into any terminal: the control that the
		// refusal below is the filter's, and that readying installed
		// nothing.
		if err := sti(unix.TIOCSTI); err != nil {
			t.Fatalf("TIOCSTI after readying the filters: %v", err)
		}
	}
	for _, tc := range []struct {
		name    string
		install func() error
	}{
		{"RefuseTerminalInjection", RefuseTerminalInjection},
		{"TerminalInjectionFilters then InstallFilters", func() error { return InstallFilters(progs) }},
	} {
		onThread(func() {
			if err := tc.install(); err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			for _, req := range []struct {
				name string
				req  uint64
			}{
				{"TIOCSTI", unix.TIOCSTI},
				{"TIOCSTI with high bits", 1<<32 | unix.TIOCSTI},
				{"TIOCLINUX", unix.TIOCLINUX},
				{"TIOCLINUX with high bits", 0xffffffff<<32 | unix.TIOCLINUX},
			} {
				if err := sti(req.req); !errors.Is(err, unix.EPERM) {
					t.Errorf("%s: %s: %v, want EPERM", tc.name, req.name, err)
				}
			}
			if _, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err != nil {
				t.Errorf("%s: TIOCGWINSZ under the filter: %v", tc.name, err)
			}
		})
	}
}
