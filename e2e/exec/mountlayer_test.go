//go:build unix

package exec

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// requireMountLayer skips a test of the mount layer where exec cannot
// make a private mount namespace.
func requireMountLayer(t *testing.T) {
	t.Helper()
	harness.RequireLandlock(t)
	if ok, why := layout.MountLayer(); !ok {
		t.Skipf("the mount layer of dsh-fs exec is not available here (%s)", why)
	}
}
