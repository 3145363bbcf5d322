//go:build dshfs_testhooks && linux

package child

import "slices"

// SetKernelWritableExtra makes the read-only tree of a session's child
// leave dirs writable besides the plan's writable folders
// (kernelWritableExtra). It exists only in builds with -tags
// dshfs_testhooks, the e2e test binaries' coverage hook
// (e2e/harness/cover.go): a release build does not contain it.
func SetKernelWritableExtra(dirs []string) {
	kernelWritableExtra = slices.Clone(dirs)
}
