package exec

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// inNetns runs f on a thread of its own in the network namespace ns:
// the sockets f makes are that namespace's. The thread is never handed
// back: it ends with its goroutine.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err == nil {
			f()
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatalf("setns %s: %v", ns, err)
	}
}
