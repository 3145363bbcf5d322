//go:build linux && !dshportable

package sandbox

import "testing"

// TestAcceleratedBuild: Linux's default build uses its accelerators;
// -tags dshportable turns them off (TestPortableBuild).
func TestAcceleratedBuild(t *testing.T) {
	if !Accelerated() {
		t.Fatal("Accelerated() is false in Linux's default build")
	}
}
