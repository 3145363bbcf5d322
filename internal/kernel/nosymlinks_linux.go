package kernel

import "golang.org/x/sys/unix"

// OpenNoSymlinks opens the canonical absolute path with flags (O_PATH,
// O_DIRECTORY, O_RDONLY: nothing is opened for writing or created),
// refusing a symlink anywhere on the way, the last component included,
// with ELOOP: the path was canonical when it was planned, so a symlink
// there now was put there since. Where the kernel has openat2 it is one
// call (RESOLVE_NO_SYMLINKS); otherwise, or when it fails, each
// component is opened beneath
// the descriptor of the one before with O_NOFOLLOW and looked at. An
// exec session's child opens what it mounts on through it.
func OpenNoSymlinks(path string, flags int) (int, error) {
	const allowed = unix.O_PATH | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_NOCTTY
	flags = flags&allowed | unix.O_CLOEXEC
	how := &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if fd, err := unix.Openat2(unix.AT_FDCWD, path, how); err == nil {
		return fd, nil
	}
	// Any failure (no openat2, a symlink, a race) takes the walk, whose
	// error names the component.
	return openComponents(path, flags)
}

// pathOnly opens a component for the walk alone: O_PATH, which needs
// no right on the file and reads nothing.
const pathOnly = unix.O_PATH
