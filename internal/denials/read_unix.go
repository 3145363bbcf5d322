//go:build unix

package denials

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// readFlags open the log: never through a symlink, and a FIFO cannot
// hang the call.
const readFlags = os.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// ownerUID is the owner of the file fi describes.
func ownerUID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
