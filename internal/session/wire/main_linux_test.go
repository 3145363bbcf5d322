package wire

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// privateEnv marks the test binary run again in a mount namespace of its
// own (TestMain).
const privateEnv = "DSH_FS_SESSION_TEST_PRIVATE"

// TestMain runs this package's tests, as root, in a mount namespace of
// their own with an empty tmpfs over the runtime folder (RuntimeBase).
// Their records, some of them of a supervisor that is gone on purpose,
// are then out of the reach of every dsh-fs exec of the machine, whose
// start removes the records of supervisors gone (removeStale), and the
// tests read no record the machine holds.
func TestMain(m *testing.M) {
	switch {
	case os.Geteuid() != 0, os.Getenv(privateEnv) == "mounted":
		// Not root, or a test's own child, which keeps the tmpfs.
		os.Exit(m.Run())
	case os.Getenv(privateEnv) != "1":
		os.Exit(runPrivate())
	}
	base := RuntimeBase()
	if err := os.MkdirAll(base, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "session tests:", err)
		os.Exit(2)
	}
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		fmt.Fprintln(os.Stderr, "session tests: a tmpfs over", base+":", err)
		os.Exit(2)
	}
	os.Setenv(privateEnv, "mounted")
	os.Exit(m.Run())
}

// runPrivate runs this test binary again, with its arguments, in a mount
// namespace of its own (whose mounts Go makes private), and returns its
// exit status.
func runPrivate() int {
	c := exec.Command(os.Args[0], os.Args[1:]...)
	c.Env = append(os.Environ(), privateEnv+"=1")
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := c.Run(); err != nil {
		if x, ok := err.(*exec.ExitError); ok {
			return x.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "session tests: a mount namespace of their own:", err)
		return 2
	}
	return 0
}
