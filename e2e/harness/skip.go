package harness

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// RequireLandlock skips a test of the kernel layer on a kernel without
// Landlock, where exec runs the session unrestricted.
func RequireLandlock(t *testing.T) {
	t.Helper()
	if sandbox.ActiveLayers(policy.Policy{}).LandlockABI == 0 {
		t.Skip("no Landlock on this kernel: dsh-fs exec cannot restrict the session's process tree")
	}
}
