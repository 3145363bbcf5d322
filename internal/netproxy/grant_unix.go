//go:build unix

package netproxy

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileID is the identity of the opened file f, and whether it is a
// regular file.
func fileID(f *os.File) (FileID, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return FileID{}, false, err
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}
