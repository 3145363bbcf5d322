package layout

// What the host knows of the mount layer before a session starts: whether
// this process can give its child one (MountLayer, UserNamespace), whether
// the kernel can make the tree read-only (ReadOnlyTree), the folders to
// pin (planPins) and the deny_read files' other names (DenyIdentity). The
// layer is applied in the child (internal/session/child).

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// UserNamespace reports whether the mount layer needs a user namespace:
// this process is not root. The child is then started in a new user
// namespace that maps only this user to itself, so what it runs keeps
// its uid and gains no privilege outside; inside, the namespace may mount
// on its own mount namespace, and the child's Landlock layer forbids any
// mount once the mount layer is in place.
func UserNamespace() bool { return os.Geteuid() != 0 }

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
