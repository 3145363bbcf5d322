//go:build unix && !linux

package layout

import "golang.org/x/sys/unix"

// folderOnly opens a folder to act beneath it: for reading, as there is
// no O_PATH here.
const folderOnly = unix.O_RDONLY | unix.O_DIRECTORY

// grantOwnerAt gives the folder name in parent its owner's read, write
// and search bits by its name in parent, never following a symlink
// (fchmodat with AT_SYMLINK_NOFOLLOW, which this OS honours).
func grantOwnerAt(parent int, name string) error {
	return unix.Fchmodat(parent, name, 0o700, unix.AT_SYMLINK_NOFOLLOW)
}
