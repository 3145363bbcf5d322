package supervisor

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// outsideReadOnlyLayer says whether the mount plan m (nil: no mount
// layer, for the reason why) makes everything outside the writable roots
// read-only, and what of it holds, for the session record and policy.
func outsideReadOnlyLayer(m *layout.MountPlan, why string) (bool, string) {
	if m == nil {
		return false, "not held for the shell: " + why
	}
	pins := fmt.Sprintf("folders above protected paths pinned against rename: %d", len(m.Pinned))
	if len(m.Unpinned) > 0 {
		pins += fmt.Sprintf(" (protected paths left unpinned past the budget: %d)", len(m.Unpinned))
	}
	if !m.OutsideReadOnly {
		_, why := layout.ReadOnlyTree()
		return false, "not held for the shell: " + why + "; " + pins
	}
	if len(m.Writable) == 0 {
		return true, "everything is read-only, metadata included (chmod, chown, utime, xattrs, chattr fail with EROFS)"
	}
	return true, "read-only outside " + strings.Join(m.Writable, ", ") +
		", metadata included (chmod, chown, utime, xattrs, chattr fail with EROFS); those roots are nodev and nosuid; " + pins
}
