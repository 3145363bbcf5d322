package child

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// apply makes the view: it clones every kept path first (a detached
// recursive copy of its mounts, as the read-only tree does), then covers
// each folder of Covered with an empty tmpfs, makes in it the folders
// and files the clones are attached on, and HOME, attaches the clones,
// and makes the tmpfs read-only. It runs after the caches' overlays,
// which the clones then carry, and before the read-only tree.
func applyView(v *plan.ReadView) error {
	clones := make([]int, len(v.Kept))
	dirs := make([]bool, len(v.Kept))
	defer func() {
		for _, fd := range clones {
			if fd > 0 {
				unix.Close(fd)
			}
		}
	}()
	for i, k := range v.Kept {
		fd, err := kernel.OpenNoSymlinks(k, unix.O_PATH)
		if err != nil {
			return mountErr("read view: keep", k, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil {
			dirs[i] = st.Mode&unix.S_IFMT == unix.S_IFDIR
			clones[i], err = unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		}
		unix.Close(fd)
		if err != nil {
			return mountErr("read view: clone", k, err)
		}
	}
	for _, c := range v.Covered {
		if err := cover(v, c, clones, dirs); err != nil {
			return mountErr("read view", c, err)
		}
	}
	return nil
}

// cover covers the folder c with a tmpfs and attaches the clones of the
// kept paths beneath it.
func cover(v *plan.ReadView, c string, clones []int, dirs []bool) error {
	tfd, err := openTarget(c, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	mfd, err := viewTmpfs()
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	if v.Home != "" && beneath(c, v.Home) {
		if err := os.MkdirAll(v.Home, 0o755); err != nil {
			return err
		}
	}
	for i, k := range v.Kept {
		if !beneath(c, k) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(k), 0o755); err != nil {
			return err
		}
		if dirs[i] {
			err = os.Mkdir(k, 0o755)
		} else {
			err = os.WriteFile(k, nil, 0o644)
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		kfd, err := kernel.OpenNoSymlinks(k, unix.O_PATH)
		if err != nil {
			return err
		}
		err = unix.MoveMount(clones[i], "", kfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(kfd)
		if err != nil {
			return fmt.Errorf("bind back %s: move_mount: %w", k, err)
		}
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(mfd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return nil
}

// viewTmpfs returns a detached mount of an empty tmpfs, writable until
// the view is made in it, nosuid, nodev and noexec.
func viewTmpfs() (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{{"size", "64k"}, {"mode", "0755"}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("fsconfig %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, fmt.Errorf("fsconfig create: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsmount: %w", err)
	}
	return mfd, nil
}

// beneath reports whether the canonical path target is dir or lies
// beneath it, by name (sandbox.Beneath's rule).
func beneath(dir, target string) bool {
	return target == dir || dir == "/" || strings.HasPrefix(target, dir) && target[len(dir)] == '/'
}
