package race

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// smallTmpfs mounts a tmpfs of the given size (mount(8) syntax, "1m") in
// a fresh temp folder, or skips the test naming why it cannot.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to mount a small tmpfs (euid %d)", os.Geteuid())
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	// Registered after TempDir, so it runs before the folder's removal.
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
