package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
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
// so (ReadOnlyTree). The pins and the other mounts still are.

// readOnlyTreeWhy says why the read-only tree cannot be made on this
// kernel, or "". mount_setattr with an unknown flag is EINVAL on a
// kernel that has it, before any check of privilege; without it the
// call is ENOSYS, or EPERM under a seccomp filter that does not know it.
var readOnlyTreeWhy = sync.OnceValue(func() string {
	err := unix.MountSetattr(unix.AT_FDCWD, "/", 1<<30, &unix.MountAttr{})
	if !errors.Is(err, unix.EINVAL) {
		return "this kernel has no mount_setattr (Linux 5.12 or newer makes the tree read-only)"
	}
	return ""
})

// ReadOnlyTree reports whether the mount layer can make everything
// outside the writable roots read-only on this kernel, and when it
// cannot, why, in a short lowercase phrase. Whether the mount layer
// applies at all is MountLayer's to say.
func ReadOnlyTree() (ok bool, why string) {
	why = readOnlyTreeWhy()
	return why == "", why
}

// readOnlyTree makes every mount read-only but the folders writable and
// kernelWritableExtra's, which are bound back writable, nodev and
// nosuid. It runs in the child's private mount namespace, before any
// other mount of the plan: they are made on the tree it leaves.
func readOnlyTree(writable []string) error {
	if classicMounts {
		return mountErr("read-only tree", "/", errors.New("needs mount_setattr (Linux 5.12)"))
	}
	dirs := slices.Clone(writable)
	for _, d := range kernelWritableExtra {
		// Test binaries only (landlock.go); a spelling through a symlink
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

// maxPinned bounds the folders a plan pins: each is a mount, made as the
// session starts. A workspace holding many nested repositories pins the
// folders above the first ones, in name order, and lists the rest in
// Unpinned. A variable only so tests can lower it.
var maxPinned = 256

// planPins returns the folders to pin for the read-only paths ro, which
// lie in the writable roots roots: for each, every folder from the
// outermost root that holds it down to its parent, that root included
// unless the read-only tree binds it anyway (rebound). A root nested in
// another is rebound too, and left out. A path whose folders would
// exceed maxPinned is unpinned, and so listed.
func planPins(ro, roots []string, rebound bool) (pinned, unpinned []string) {
	set := map[string]bool{}
	for _, p := range ro {
		outer := ""
		for _, r := range roots {
			if p != r && Beneath(r, p) && (outer == "" || len(r) < len(outer)) {
				outer = r
			}
		}
		if outer == "" {
			continue
		}
		var chain []string
		for d := filepath.Dir(p); Beneath(outer, d); d = filepath.Dir(d) {
			isRoot := slices.Contains(roots, d)
			if !set[d] && !(rebound && isRoot) {
				chain = append(chain, d)
			}
			if d == outer || d == "/" {
				break
			}
		}
		if len(set)+len(chain) > maxPinned {
			unpinned = append(unpinned, p)
			continue
		}
		for _, d := range chain {
			set[d] = true
		}
	}
	return sortedKeys(set), unpinned
}

// pin binds the folder path over itself, recursively, so that it is a
// mount point: rename(2) and rmdir(2) of a mount point are EBUSY.
func pin(path string) error {
	tfd, err := openTarget(path, unix.S_IFREG)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if !classicMounts {
		tree, err := unix.OpenTree(tfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err == nil {
			defer unix.Close(tree)
			if err := unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
				return fmt.Errorf("move_mount: %w", err)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("open_tree: %w", err)
		}
	}
	if err := unix.Mount(procFd(tfd), procFd(tfd), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}

// maxDenyIdentities bounds the identities a plan hands the record, which
// has a size limit of its own.
const maxDenyIdentities = 4096

// denyIdentities lists ids, sorted, at most maxDenyIdentities of them.
func denyIdentities(ids map[fileID]string) []policy.DenyIdentity {
	out := make([]policy.DenyIdentity, 0, len(ids))
	for id, g := range ids {
		out = append(out, policy.DenyIdentity{Dev: id.dev, Ino: id.ino, Glob: g})
	}
	slices.SortFunc(out, func(a, b policy.DenyIdentity) int {
		return cmp.Or(cmp.Compare(a.Dev, b.Dev), cmp.Compare(a.Ino, b.Ino))
	})
	if len(out) > maxDenyIdentities {
		out = out[:maxDenyIdentities]
	}
	return out
}
