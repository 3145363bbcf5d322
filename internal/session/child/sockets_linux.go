package child

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
)

// hideSockets binds the empty read-only file empty (an O_PATH
// descriptor) over each socket of sockets. A socket gone since the plan
// is skipped: there is nothing left to reach at its path. Anything else
// there now (a symlink, a file) fails: the plan no longer holds.
func (a applier) hideSockets(empty int, sockets []string) error {
	for _, s := range sockets {
		if err := a.hideSocket(empty, s); err != nil {
			return mountErr("hide socket", s, err)
		}
	}
	return nil
}

func (a applier) hideSocket(empty int, path string) error {
	tfd, err := kernel.OpenNoSymlinks(path, unix.O_PATH)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	var st unix.Stat_t
	if err := unix.Fstat(tfd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errors.New("changed since the plan")
	}
	if a.classic {
		return bindReadOnlyClassic(empty, tfd)
	}
	// A regular file may cover any inode that is not a folder, a
	// socket's included.
	tree, err := unix.OpenTree(empty, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOSYS) {
		return bindReadOnlyClassic(empty, tfd)
	}
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
