//go:build unix

package layout

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// linkedID is the identity of the regular file abs, when it has several
// links.
func linkedID(abs string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Lstat(abs, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// exeIdentity is the identity of the executable exe (device, inode,
// size, mtime), "" when it cannot be read.
func exeIdentity(exe string) string {
	var st unix.Stat_t
	if unix.Stat(exe, &st) != nil {
		return ""
	}
	return fmt.Sprintf(" %d:%d %d %d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
}
