package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// probeUserNamespace reports whether a child in a user namespace can
// mount here; as root there is nothing to probe.
func probeUserNamespace(self string) error {
	if !layout.UserNamespace() {
		return nil
	}
	c := selfCommand(self, argUserNamespaceProbe)
	c.SysProcAttr = mountNamespace()
	out, err := c.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}

// userNamespaceProbe is the probe's whole life, in its private mount
// namespace, where nothing it mounts is seen outside.
func userNamespaceProbe() int {
	if err := ownNamespaces(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	if err := unix.Mount("none", os.TempDir(), "tmpfs", 0, "size=4k"); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		return statusFailed
	}
	if err := child.MountProc(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	if err := tty.IsolateTerminals(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	return statusOK
}

// mountIdentity is path's device and mount id, and with ino its inode,
// for a key: a bind mount of the same folder with other options is
// another mount.
func mountIdentity(path string, ino bool) (string, bool) {
	var sx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_MNT_ID, &sx) != nil ||
		sx.Mask&unix.STATX_MNT_ID == 0 {
		return "", false
	}
	if !ino {
		sx.Ino = 0
	}
	return fmt.Sprintf("%d:%d:%d:%d", sx.Dev_major, sx.Dev_minor, sx.Ino, sx.Mnt_id), true
}

// ownNamespaces refuses a probe that is not where exec starts it: the
// first process of the PID namespace that mountNamespace makes together
// with its mount namespace. Each probe mounts (a tmpfs over the
// temporary folder, the caches' overlays); started any other way, by
// hand from a shell or by a tool that times it, its mounts would land in
// the caller's namespace and cover the caller's folders.
func ownNamespaces() error {
	if os.Getpid() != 1 {
		return errors.New("probe: not in namespaces of its own (exec starts it in them); nothing mounted")
	}
	return nil
}
