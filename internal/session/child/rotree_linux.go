package child

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// The read-only tree of a dsh-fs exec session (docs/design.md §10).
// Landlock refuses writes and creations outside the writable roots, but
// not chmod, chown, utime, setxattr or the inode flags (chattr): a shell
// running as root changed those on any file, the trusted config and its
// own session record included, and an ordinary user on any file it owns.
// A read-only mount refuses all of them with EROFS whatever the uid, so
// in the session's private mount namespace every mount is made
// read-only, and the writable roots are bound writable again, nodev and
// nosuid: a device node in a root (made before the session, or by a
// process that could) opens for nothing, and no set-uid program there
// gains anything.
//
// The order keeps the roots writable without ever writing a flag a user
// namespace may not clear: each root is cloned first (open_tree with
// OPEN_TREE_CLONE and AT_RECURSIVE: a detached copy of its mounts, which
// no later change to the tree touches), the clones are made nodev and
// nosuid, "/" is made read-only recursively (mount_setattr), and the
// clones are attached back on their roots, outermost first. A device
// node outside the roots (/dev/null, /dev/tty, the terminals in
// /dev/pts) stays writable on a read-only mount: the kernel checks a
// mount's read-only flag for regular files, folders and symlinks only.
//
// Kernels before 5.12 have no mount_setattr, and mount(2) can make a
// mount read-only only one at a time, by a path that a mount stacked on
// it hides; there the read-only tree is not applied, and `policy` says
// so (layout.ReadOnlyTree). The pins and the other mounts still are.

// kernelWritableExtra names folders, besides the plan's writable ones,
// that the read-only tree leaves writable: the coverage folder of a test
// binary that runs as the child (GOCOVERDIR), written at its exit. A
// release build has no way to set it: the one setter,
// SetKernelWritableExtra, is in testhooks.go, which only a build with
// -tags dshfs_testhooks compiles (sandbox's hook of the same name is the
// kernel layer's; e2e/repo's TestTestHooksOutOfRelease checks both).
var kernelWritableExtra []string

// readOnlyTree makes every mount read-only but the folders writable,
// kernelWritableExtra's and a's writableExtra, which are bound back
// writable, nodev and nosuid. It runs in the child's private mount
// namespace, before any other mount of the plan: they are made on the
// tree it leaves.
func (a applier) readOnlyTree(writable []string) error {
	if a.classic {
		return mountErr("read-only tree", "/", errors.New("needs mount_setattr (Linux 5.12)"))
	}
	dirs := slices.Clone(writable)
	for _, d := range append(slices.Clip(kernelWritableExtra), a.writableExtra...) {
		// Test binaries only; a spelling through a symlink
		// would be refused below.
		if c, err := filepath.EvalSymlinks(d); err == nil {
			dirs = append(dirs, c)
		}
	}
	// Sorted, a folder comes before every folder beneath it: the outer
	// clone is attached first, and an inner one on top of it.
	dirs = slices.Compact(slices.Sorted(slices.Values(existingDirs(dirs))))
	clones := make([]int, 0, len(dirs))
	defer func() {
		for _, fd := range clones {
			unix.Close(fd) // an attached clone stays; a detached one goes
		}
	}()
	for _, d := range dirs {
		tree, err := cloneTree(d)
		if err != nil {
			return mountErr("clone writable root", d, err)
		}
		clones = append(clones, tree)
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return mountErr("nodev,nosuid", d, fmt.Errorf("mount_setattr: %w", err))
		}
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &attr); err != nil {
		return mountErr("read-only tree", "/", fmt.Errorf("mount_setattr: %w", err))
	}
	for i, d := range dirs {
		// By its path again: an outer clone attached since may now be
		// what the path leads to.
		tfd, err := openTarget(d, unix.S_IFREG)
		if err == nil {
			err = unix.MoveMount(clones[i], "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
			unix.Close(tfd)
		}
		if err != nil {
			return mountErr("bind writable root", d, err)
		}
	}
	return nil
}

// cloneTree returns a detached recursive copy of the mounts at the folder
// dir, opened without following any symlink.
func cloneTree(dir string) (int, error) {
	fd, err := openTarget(dir, unix.S_IFREG)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fd)
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	return tree, nil
}

// pin binds the folder path over itself, recursively, so that it is a
// mount point: rename(2) and rmdir(2) of a mount point are EBUSY.
func (a applier) pin(path string) error {
	tfd, err := openTarget(path, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	return a.overItself(tfd)
}

// overItself binds what fd is open on over itself, with what is mounted
// beneath it.
func (a applier) overItself(fd int) error {
	if !a.classic {
		tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err == nil {
			defer unix.Close(tree)
			if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
				return fmt.Errorf("move_mount: %w", err)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("open_tree: %w", err)
		}
	}
	if err := unix.Mount(procFd(fd), procFd(fd), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}
