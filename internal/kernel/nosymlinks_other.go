//go:build unix && !linux

package kernel

import "golang.org/x/sys/unix"

// OpenNoSymlinks opens the canonical absolute path with flags
// (O_DIRECTORY, O_RDONLY: nothing is opened for writing or created),
// refusing a symlink anywhere on the way, the last component included,
// with ELOOP. Without openat2 it is always the component walk: each
// component opened beneath the one before with O_NOFOLLOW and looked at,
// the last reopened for flags through its parent. Without O_PATH a
// component the caller may not read (a folder with search right alone)
// cannot be walked, and the open fails: it never falls back to the name.
func OpenNoSymlinks(path string, flags int) (int, error) {
	const allowed = unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_NOCTTY
	return openComponents(path, flags&allowed|unix.O_CLOEXEC)
}

// pathOnly opens a component for the walk: for reading, as no O_PATH
// exists here.
const pathOnly = unix.O_RDONLY
