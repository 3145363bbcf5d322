package trust

import (
	"os/exec"
	"testing"
)

// asUnmappedUser skips: macOS has no user namespaces.
func asUnmappedUser(t *testing.T, _ *exec.Cmd, _ uint32) {
	t.Skip("macOS has no user namespaces")
}
