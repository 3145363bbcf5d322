//go:build !linux

package exec

import (
	"runtime"
	"testing"
)

// inNetns skips where there are no network namespaces.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	t.Skipf("no network namespaces on %s", runtime.GOOS)
}
