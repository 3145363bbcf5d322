//go:build unix

package kernel

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openComponents is OpenNoSymlinks without openat2: a walk from "/"
// that opens each component with O_PATH|O_NOFOLLOW and refuses a
// symlink, then opens the last with flags.
func openComponents(path string, flags int) (int, error) {
	if !strings.HasPrefix(path, "/") {
		return -1, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
	}
	dir, err := unix.Open("/", pathOnly|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	names := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	for i, name := range names {
		if name == "." || name == ".." {
			unix.Close(dir)
			return -1, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
		}
		fd, err := unix.Openat(dir, name, pathOnly|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
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
		if i == len(names)-1 && flags&pathOnly == 0 {
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
