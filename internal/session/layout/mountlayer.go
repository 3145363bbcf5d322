package layout

// What the host knows of the mount layer before a session starts: whether
// this process can give its child one (MountLayer, UserNamespace), whether
// the kernel can make the tree read-only (ReadOnlyTree), the folders to
// pin (planPins) and the deny_read files' other names (DenyIdentity). The
// layer is applied in the child (internal/session/child).

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
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

// UserNamespace reports whether the mount layer needs a user namespace:
// this process is not root. The child is then started in a new user
// namespace that maps only this user to itself, so what it runs keeps
// its uid and gains no privilege outside; inside, the namespace may mount
// on its own mount namespace, and the child's Landlock layer forbids any
// mount once the mount layer is in place.
func UserNamespace() bool { return os.Geteuid() != 0 }

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

// planPins returns the folders to pin for the read-only paths ro, which
// lie in the writable roots roots: for each, every folder from the
// outermost root that holds it down to its parent, that root included
// unless the read-only tree binds it anyway (rebound). A root nested in
// another is rebound too, and left out. A path whose folders would
// bring them past maxPinned is unpinned, and so listed.
func planPins(ro, roots []string, rebound bool, maxPinned int) (pinned, unpinned []string) {
	set := map[string]bool{}
	for _, p := range ro {
		outer := ""
		for _, r := range roots {
			if p != r && sandbox.Beneath(r, p) && (outer == "" || len(r) < len(outer)) {
				outer = r
			}
		}
		if outer == "" {
			continue
		}
		var chain []string
		for d := filepath.Dir(p); sandbox.Beneath(outer, d); d = filepath.Dir(d) {
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
