package kernel

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// TestTerminalInjectionFilters: readying the filters installs nothing;
// in a child that installs them in order as a session's first process
// does, TIOCSTI and TIOCLINUX on its terminal fail with EPERM, also
// spelled with high bits set (the kernel ignores them), while other
// terminal ioctls still work.
func TestTerminalInjectionFilters(t *testing.T) {
	if os.Getenv("TERMINAL_CHILD") != "" {
		t.Skip("in the child")
	}
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	progs, err := TerminalInjectionFilters()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := compatArch(); ok && len(progs) != 2 {
		t.Errorf("%d programs, want the native one and the 32-bit ABI's", len(progs))
	}
	if os.Geteuid() == 0 {
		// Root may push into any terminal: the control that the
		// refusal in the child is the filters', and that readying
		// installed nothing.
		if err := pushInput(int(slave.Fd()), unix.TIOCSTI); err != nil {
			t.Fatalf("TIOCSTI after readying the filters: %v", err)
		}
	}
	runInstalled(t, rawinit.Layers{Filters: progs}, int(slave.Fd()), "TestTerminalInjectionFiltersChild", "TERMINAL_CHILD=1")
}

// TestTerminalInjectionFiltersChild is TestTerminalInjectionFilters'
// child, under the filters since before it started, its terminal on
// descriptor 0.
func TestTerminalInjectionFiltersChild(t *testing.T) {
	if os.Getenv("TERMINAL_CHILD") == "" {
		t.Skip("run by TestTerminalInjectionFilters")
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
		if err := pushInput(0, req.req); !errors.Is(err, unix.EPERM) {
			t.Errorf("%s: %v, want EPERM", req.name, err)
		}
	}
	if _, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); err != nil {
		t.Errorf("TIOCGWINSZ under the filters: %v", err)
	}
}

// pushInput asks, with the ioctl req, to put one byte into the input of
// the terminal fd.
func pushInput(fd int, req uint64) error {
	b := byte('x')
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&b))); e != 0 {
		return e
	}
	return nil
}
