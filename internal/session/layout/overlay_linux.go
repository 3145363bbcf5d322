package layout

import "golang.org/x/sys/unix"

// folderOnly opens a folder to act beneath it, reading nothing: O_PATH.
const folderOnly = unix.O_PATH | unix.O_DIRECTORY

// grantOwnerAt gives the folder name in parent its owner's read, write
// and search bits, through an O_PATH descriptor of it, which needs none
// of them, opened without following a symlink.
func grantOwnerAt(parent int, name string) error {
	pfd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return unix.Fchmodat(pfd, "", 0o700, unix.AT_EMPTY_PATH)
}
