package child

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// MountOverlay mounts o: an overlay whose lower layer is what o.Path
// holds now, attached on o.Path, nodev and nosuid. In a user namespace
// the overlay keeps its own bookkeeping in user.* extended attributes
// (userxattr), the only ones such a namespace may write; as root it
// copies up only the metadata of a file whose metadata alone changes
// (metacopy). The mount point
// is opened without following a symlink, and the lower layer named by
// the same descriptor, so both are the folder checked.
func MountOverlay(o plan.Overlay) error {
	tfd, err := openTarget(o.Path, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	fsfd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fsfd)
	lower := procFd(tfd)
	set := func(k, v string) error {
		if err := unix.FsconfigSetString(fsfd, k, v); err != nil {
			return fmt.Errorf("fsconfig %s: %w", k, err)
		}
		return nil
	}
	// "lowerdir+" (Linux 6.8) takes one path as it is; "lowerdir" splits
	// on ':' and needs ',' and '\' escaped, which /proc/self/fd/N lacks.
	if err := unix.FsconfigSetString(fsfd, "lowerdir+", lower); err != nil {
		if err := set("lowerdir", lower); err != nil {
			return err
		}
	}
	if err := set("upperdir", o.Upper); err != nil {
		return err
	}
	if err := set("workdir", o.Work); err != nil {
		return err
	}
	// The upper layer is discarded with the session: no copy-up need
	// reach the disk (volatile skips the overlay's fsyncs). A kernel
	// without it mounts without.
	_ = unix.FsconfigSetFlag(fsfd, "volatile")
	if os.Geteuid() != 0 { // in a user namespace (layout.UserNamespace)
		if err := unix.FsconfigSetFlag(fsfd, "userxattr"); err != nil {
			return fmt.Errorf("fsconfig userxattr: %w", err)
		}
	} else {
		// Go marks each build cache entry it uses with a new mtime once
		// an hour: without metacopy every such utime copies the whole
		// entry up (a warm 58 MB cache aged three hours: 59 MB copied,
		// go test 1.03 s; with it 5.8 MB, 0.49 s). Its redirects and
		// metacopy xattrs are trusted.* ones in the private upper layer,
		// which the session can neither reach nor set. A user namespace
		// cannot have it (userxattr refuses metacopy); a kernel without
		// it mounts without.
		_ = unix.FsconfigSetString(fsfd, "metacopy", "on")
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID)
	if err != nil {
		return fmt.Errorf("fsmount overlay: %w", err)
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// MountOverlayFolders mounts a tmpfs of size bytes (mode 0700, nodev,
// nosuid) on the empty folder dir, in the caller's private mount
// namespace, with the upper and work folders of overlays made in it,
// each beneath dir: what the session writes in its caches never
// reaches a disk, and goes with the namespace. dir is opened without
// following a symlink and mounted on through that descriptor; the
// folders are made in the detached tmpfs before it is attached.
func MountOverlayFolders(dir string, size uint64, overlays []plan.Overlay) error {
	tfd, err := openTarget(dir, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	var folders []string
	for _, o := range overlays {
		for _, f := range []string{o.Upper, o.Work} {
			rel, err := filepath.Rel(dir, f)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
				return fmt.Errorf("%s is not beneath %s", f, dir)
			}
			folders = append(folders, rel)
		}
	}
	mfd, err := newTmpfs([][2]string{{"size", strconv.FormatUint(size, 10)}, {"mode", "0700"}},
		unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID)
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	for _, rel := range folders {
		if err := mkdirAllAt(mfd, rel); err != nil {
			return fmt.Errorf("mkdir %s: %w", filepath.Join(dir, rel), err)
		}
	}
	if err := unix.MoveMount(mfd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// mkdirAllAt makes the relative path rel beneath the folder fd, each
// missing folder 0700; one that exists is no error.
func mkdirAllAt(fd int, rel string) error {
	at := ""
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		if err := unix.Mkdirat(fd, at, 0o700); err != nil && err != unix.EEXIST {
			return err
		}
	}
	return nil
}
