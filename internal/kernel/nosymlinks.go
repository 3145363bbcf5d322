package kernel

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

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

// openComponents is OpenNoSymlinks without openat2: a walk from "/"
// that opens each component with O_PATH|O_NOFOLLOW and refuses a
// symlink, then opens the last with flags.
func openComponents(path string, flags int) (int, error) {
	if !strings.HasPrefix(path, "/") {
		return -1, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
	}
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	names := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	for i, name := range names {
		if name == "." || name == ".." {
			unix.Close(dir)
			return -1, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
		}
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		var st unix.Stat_t
		if err == nil {
			if err = unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
			}
		}
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			err = unix.ELOOP
		}
		if err != nil {
			unix.Close(dir)
			return -1, &os.PathError{Op: "open", Path: "/" + strings.Join(names[:i+1], "/"), Err: err}
		}
		if i == len(names)-1 && flags&unix.O_PATH == 0 {
			// Reopen the last for what flags ask, through its parent,
			// still refusing a symlink swapped in meanwhile.
			unix.Close(fd)
			fd, err = unix.Openat(dir, name, flags|unix.O_NOFOLLOW, 0)
			if err != nil {
				unix.Close(dir)
				return -1, &os.PathError{Op: "open", Path: path, Err: err}
			}
		} else if i == len(names)-1 && flags&unix.O_DIRECTORY != 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(fd)
			unix.Close(dir)
			return -1, &os.PathError{Op: "open", Path: path, Err: unix.ENOTDIR}
		}
		unix.Close(dir)
		dir = fd
	}
	return dir, nil
}
