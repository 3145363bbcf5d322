package layout

import (
	"errors"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// MountLayer reports whether this process can give its child a private
// mount namespace, and when it cannot, why, in a short lowercase phrase.
// Running as root (with CAP_SYS_ADMIN) it can. Otherwise it can only in a
// user namespace of its own (UserNamespace), where the kernel allows
// unprivileged ones: whether such a namespace may mount here is known only
// by trying, which dsh-fs exec does before it relies on it.
func MountLayer() (ok bool, why string) {
	if os.Geteuid() != 0 {
		if n, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err != nil || strings.TrimSpace(string(n)) == "0" {
			return false, "not root, and this kernel allows no unprivileged user namespace"
		}
		return true, ""
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, "cannot read capabilities: " + err.Error()
	}
	if data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) == 0 {
		return false, "needs cap_sys_admin"
	}
	return true, ""
}

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
