package child

// The plan's Files applied (applyFiles), in exec's child and its private
// mount namespace: the binds, pins and hiding, each made through a
// descriptor opened without following a symlink. The plan is the host's
// (internal/session/layout).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// An applier applies a plan's Files (applyFiles). Its zero value is the
// session's: the mount API of Linux 5.12 and newer, and mount(2) where a
// call of it is ENOSYS.
type applier struct {
	// classic makes it use mount(2) throughout, as on kernels before
	// 5.12, so tests exercise the path older kernels take.
	classic bool
	// writableExtra are folders the read-only tree leaves writable
	// besides the plan's and kernelWritableExtra's: a test's.
	writableExtra []string
}

// applyFiles mounts m, in the child's private mount namespace and before
// Landlock (which forbids mounting). emptyFile, an empty 0400 file, is
// bound over hidden files. The order is the read-only tree, the pins
// (outermost first), the pinned symlinks, the read-only binds, then the
// hiding, since each mount is made on what the ones before it left.
// Every path is opened without following a symlink, checked to still be
// what the plan says, and mounted on through that descriptor, so a path
// swapped since the plan fails rather than covering where a link leads.
// The first failure stops it; what it mounted stays, and the caller
// must not start CMD.
func (a applier) applyFiles(m *plan.Files, emptyFile string) error {
	empty := -1
	if len(m.HiddenFiles)+len(m.HiddenSockets) > 0 {
		fd, err := unix.Open(emptyFile, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		var st unix.Stat_t
		if err == nil {
			defer unix.Close(fd)
			err = unix.Fstat(fd, &st)
		}
		if err == nil && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != 0) {
			// Bound over a secret, anything else would show something.
			err = errors.New("not an empty regular file")
		}
		if err != nil {
			return mountErr("open empty file", emptyFile, err)
		}
		empty = fd
	}
	// The working folder was entered before anything was mounted: a
	// relative path would still lead into the mounts beneath the plan's
	// (the read-only tree's, what is hidden), so it is entered again by
	// its name once all is mounted.
	wd, err := os.Getwd()
	if err != nil {
		return mountErr("working folder", ".", err)
	}
	// The overlays first: an overlay's upper folder must lie on a
	// writable mount when it is made, and the read-only tree binds each
	// overlay back writable like a root.
	writable := slices.Clip(m.Writable)
	if m.OverlayMemory > 0 {
		if err := MountOverlayFolders(m.OverlayDir, m.OverlayMemory, m.Overlays); err != nil {
			return mountErr("overlays' tmpfs", m.OverlayDir, err)
		}
	}
	for _, o := range m.Overlays {
		if err := MountOverlay(o); err != nil {
			return mountErr("overlay", o.Path, err)
		}
		writable = append(writable, o.Path)
	}
	if m.View != nil {
		if err := applyView(m.View); err != nil {
			return err
		}
	}
	if m.OutsideReadOnly {
		if err := a.readOnlyTree(writable); err != nil {
			return err
		}
	}
	for _, p := range m.Pinned {
		if err := a.pin(p); err != nil {
			return mountErr("pin", p, err)
		}
	}
	for _, p := range m.PinnedLinks {
		if err := a.pinLink(p); err != nil {
			return mountErr("pin symlink", p, err)
		}
	}
	for _, p := range m.ReadOnly {
		if err := a.bindReadOnly(-1, p, 0); err != nil {
			return mountErr("bind read-only", p, err)
		}
	}
	for _, p := range m.Hidden {
		if err := a.hideDir(p); err != nil {
			return mountErr("hide", p, err)
		}
	}
	for _, p := range m.HiddenFiles {
		if err := a.bindReadOnly(empty, p, unix.S_IFDIR); err != nil {
			return mountErr("hide", p, err)
		}
	}
	// The overlays' upper folders are reached through the overlays only.
	if m.OverlayDir != "" {
		if err := a.hideDir(m.OverlayDir); err != nil {
			return mountErr("hide", m.OverlayDir, err)
		}
	}
	// Last: a cover over a socket must lie above every bind that
	// re-mounts a folder holding it (the writable roots, the pins).
	if err := a.hideSockets(empty, m.HiddenSockets); err != nil {
		return err
	}
	// Other sessions' folders, their caches' layers with them.
	if m.Runtime != "" {
		if err := a.hideRuntime(m.Runtime, m.Record); err != nil {
			return mountErr("hide", m.Runtime, err)
		}
	}
	if err := unix.Chdir(wd); err != nil {
		return mountErr("enter the working folder", wd, err)
	}
	return nil
}

func mountErr(op, path string, err error) error {
	return fserr.Wrap(fserr.IO, fmt.Sprintf("mount: %s %s: %v", op, path, err), err)
}

// openTarget opens the mount point path and checks its type: not a
// symlink, and not of type notType (S_IFDIR or S_IFREG; 0 for either).
func openTarget(path string, notType uint32) (int, error) {
	fd, err := kernel.OpenNoSymlinks(path, unix.O_PATH)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("changed since the plan: %w", err)
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	switch t := st.Mode & unix.S_IFMT; {
	case t == unix.S_IFLNK || t == notType:
		unix.Close(fd)
		return -1, fmt.Errorf("changed since the plan")
	case t != unix.S_IFDIR && t != unix.S_IFREG:
		unix.Close(fd)
		return -1, fmt.Errorf("not a folder or a regular file")
	}
	return fd, nil
}

// pinLink binds the symlink path over itself, the link and not where it
// leads (opened with O_NOFOLLOW, mounted on by descriptor): a mount
// point, it can be neither removed nor replaced (EBUSY) with a folder
// the session makes. It must still be a symlink, reached through none.
func (a applier) pinLink(path string) error {
	dir, err := kernel.OpenNoSymlinks(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("changed since the plan: %w", err)
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, filepath.Base(path), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return errors.New("changed since the plan: no longer a symlink")
	}
	return a.overItself(fd)
}

// bindReadOnly binds what the descriptor src is open on over target,
// recursively and read-only; src -1 binds target over itself. target
// must not be of type notType.
func (a applier) bindReadOnly(src int, target string, notType uint32) error {
	tfd, err := openTarget(target, notType)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	sfd := src
	if src < 0 {
		sfd = tfd
	}
	if a.classic {
		return bindReadOnlyClassic(sfd, tfd)
	}
	tree, err := unix.OpenTree(sfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if errors.Is(err, unix.ENOSYS) {
		return bindReadOnlyClassic(sfd, tfd)
	}
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree) // an unattached clone goes with its descriptor
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	err = unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
	if errors.Is(err, unix.ENOSYS) {
		return bindReadOnlyClassic(sfd, tfd)
	}
	if err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// bindReadOnlyClassic is bindReadOnly for kernels before 5.12, without
// open_tree or mount_setattr: a bind, then a remount read-only of the
// new mount. The remount keeps the per-mount flags the source has (nosuid, nodev,
// noexec, atime), which a remount would otherwise clear and which are
// locked when set by a more privileged namespace (EPERM). Only the top
// mount becomes read-only: a mount beneath the bound folder keeps its
// flags, a limit of these kernels.
func bindReadOnlyClassic(sfd, tfd int) error {
	src, target := procFd(sfd), procFd(tfd)
	if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	// tfd still names the folder beneath the new mount; its path now
	// leads to the mount, so the remount goes by the path, checked again.
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(sfd, &sfs); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	var keep uintptr
	for _, f := range [...]struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(sfs.Flags)&f.st != 0 {
			keep |= f.ms
		}
	}
	path, err := kernel.OpenedPath(tfd)
	if err != nil {
		return fmt.Errorf("remount read-only: no path for the mount point")
	}
	fd, err := kernel.OpenNoSymlinks(path, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Mount("", procFd(fd), "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	return nil
}

// hideDir covers the folder path with an empty, read-only tmpfs.
func (a applier) hideDir(path string) error {
	tfd, err := openTarget(path, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if !a.classic {
		mfd, err := emptyTmpfs()
		if err == nil {
			defer unix.Close(mfd)
			if err := unix.MoveMount(mfd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
				return fmt.Errorf("move_mount: %w", err)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOSYS) {
			return err
		}
	}
	flags := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	return unix.Mount("tmpfs", procFd(tfd), "tmpfs", flags, "size=4k,mode=0500")
}

// emptyTmpfs returns a detached mount of an empty tmpfs, read-only,
// nosuid, nodev and noexec, to attach with move_mount.
func emptyTmpfs() (int, error) {
	return newTmpfs([][2]string{{"size", "4k"}, {"mode", "0500"}},
		unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
}

// newTmpfs returns a detached mount of a new tmpfs with the options opts
// and the mount attributes attr, to attach with move_mount.
func newTmpfs(opts [][2]string, attr int) (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fsfd)
	for _, kv := range opts {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("fsconfig %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, fmt.Errorf("fsconfig create: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, attr)
	if err != nil {
		return -1, fmt.Errorf("fsmount: %w", err)
	}
	return mfd, nil
}

// procFd names the file fd is open on, for a call that takes a path;
// the kernel resolves it to the very file opened.
func procFd(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }
