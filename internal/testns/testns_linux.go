package testns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// stateEnv says where a test binary stands: "1" in the mount namespace
// Main made, its folders not mounted yet; "mounted" once they are, in
// that binary and in every process it starts, which keep its mounts.
const stateEnv = "DSH_FS_TEST_PRIVATE_RUNTIME"

// Main runs run, the test binary's own main (m.Run, or testscript's
// Main), and exits with its status: as root, in a mount namespace of its
// own with an empty tmpfs (0700, nodev, nosuid) over each of folders,
// made where missing; as any other user, or in a process that already
// has them, as it is. A folder that cannot be covered ends the run with
// status 2 and why: a test must not fall back on the machine's.
func Main(run func() int, folders ...string) {
	switch {
	case os.Geteuid() != 0, os.Getenv(stateEnv) == "mounted":
		os.Exit(run())
	case os.Getenv(stateEnv) != "1":
		os.Exit(again())
	}
	for _, dir := range folders {
		if err := cover(dir); err != nil {
			fmt.Fprintln(os.Stderr, "testns:", err)
			os.Exit(2)
		}
	}
	os.Setenv(stateEnv, "mounted")
	os.Exit(run())
}

// cover mounts an empty tmpfs over dir.
func cover(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return fmt.Errorf("a tmpfs over %s: %w", dir, err)
	}
	return nil
}

// again runs this test binary once more, with its arguments, in a mount
// namespace of its own (whose mounts Go makes private), and returns its
// exit status. The signals that end a test run (go test's SIGQUIT at its
// timeout, an interrupt) are passed on, so the run that does the work
// prints its goroutines; it dies with this one.
func again() int {
	runtime.LockOSThread() // the parent-death signal follows the thread that forks
	c := exec.Command("/proc/self/exe", os.Args[1:]...)
	c.Args[0] = os.Args[0]
	c.Env = append(os.Environ(), stateEnv+"=1")
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	err := c.Start()
	if err == nil {
		go func() {
			for sig := range sigs {
				c.Process.Signal(sig)
			}
		}()
		err = c.Wait()
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode()
	case errors.As(err, &exit):
		// Killed by a signal: say so as a shell would.
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
	}
	fmt.Fprintln(os.Stderr, "testns: a mount namespace of its own:", err)
	return 2
}
