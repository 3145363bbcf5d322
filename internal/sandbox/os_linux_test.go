package sandbox

import (
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
)

// exchange swaps the objects at the paths a and b atomically
// (renameat2's RENAME_EXCHANGE), for the race tests.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// openFollowing opens p as the kernel resolves it, every symlink
// followed, as a handle (the fuzz tests' reference).
func openFollowing(p string) (int, error) { return unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0) }

// openNoSymlinks is the session's resolver (kernel.OpenNoSymlinks), run
// with the fence's escape table.
func openNoSymlinks(path string, flags int) (int, error) { return kernel.OpenNoSymlinks(path, flags) }
