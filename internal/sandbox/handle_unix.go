package sandbox

import (
	"bytes"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// What the portable handles need on every Unix, kept here so that Linux
// runs the logic macOS uses (os_darwin.go) in its tests.

// cString is the NUL-terminated path in buf (fcntl(F_GETPATH)'s answer);
// ENAMETOOLONG without a NUL.
func cString(buf []byte) (string, error) {
	n := bytes.IndexByte(buf, 0)
	if n < 0 {
		return "", fsys.ENAMETOOLONG
	}
	if n == 0 {
		return "", fsys.ENOENT
	}
	return string(buf[:n]), nil
}

// linkByName reads the symlink open as the handle fd by the name
// readBack gives it, where a link cannot be read through its handle
// (macOS: no readlinkat(fd, "")). The name is read, then looked at: the
// text read is the handle's only if the name still holds the same link
// (device and inode) after the read, EAGAIN otherwise. Even a text read
// from another link would be harmless, since the walk resolves every
// link's text itself under its own rules; the check keeps the answer
// the handle's.
func linkByName(fd int, readBack func(int) (string, error)) (string, error) {
	var held, now fsys.Stat_t
	if err := fsys.Fstat(fd, &held); err != nil {
		return "", err
	}
	if held.Mode&fsys.S_IFMT != fsys.S_IFLNK {
		return "", fsys.EINVAL
	}
	p, err := readBack(fd)
	if err != nil {
		return "", err
	}
	text, err := readlinkat(fsys.AT_FDCWD, p)
	if err != nil {
		return "", err
	}
	if err := fsys.Lstat(p, &now); err != nil || now.Dev != held.Dev || now.Ino != held.Ino {
		return "", fsys.EAGAIN
	}
	return text, nil
}
