//go:build !linux

package race

import (
	"runtime"
	"testing"
)

// smallTmpfs skips where there is no tmpfs of a chosen size to mount.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	t.Skipf("no tmpfs to mount on %s", runtime.GOOS)
	return ""
}
