package dirent

import "golang.org/x/sys/unix"

// Read reads records of the folder fd into buf (getdirentries64's
// struct dirent: d_ino, d_seekoff, d_reclen, d_namlen, d_type, d_name)
// and returns how many bytes it filled; 0 at the folder's end.
func Read(fd int, buf []byte) (int, error) {
	var base uintptr
	return unix.Getdirentries(fd, buf, &base)
}

// The offsets of a record's type and name.
const (
	TypeOff = 20
	NameOff = 21
)
