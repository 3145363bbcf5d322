package dirent

import "golang.org/x/sys/unix"

// Read reads records of the folder fd into buf (getdents64's
// linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name) and returns
// how many bytes it filled; 0 at the folder's end.
func Read(fd int, buf []byte) (int, error) { return unix.Getdents(fd, buf) }

// The offsets of a record's type and name.
const (
	TypeOff = 18
	NameOff = 19
)
