package sandbox

import (
	"golang.org/x/sys/unix"
)

// exchange swaps the objects at the paths a and b atomically
// (renameatx_np's RENAME_SWAP), for the race tests.
func exchange(a, b string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_SWAP)
}

// openFollowing opens p as the kernel resolves it, every symlink
// followed (the fuzz tests' reference).
func openFollowing(p string) (int, error) {
	return unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// openNoSymlinks stands for the session's Linux resolver, which macOS
// does not have: the fence's own walk refusing every symlink.
func openNoSymlinks(path string, flags int) (int, error) {
	w, err := walkPath(path, walkSpec{flags: flags, noSymlinks: true})
	return w.fd, err
}
