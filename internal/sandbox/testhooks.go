//go:build dshfs_testhooks

package sandbox

import "slices"

// SetKernelWritableExtra makes the kernel layer and the read-only tree
// leave dirs writable besides the writable roots (kernelWritableExtra),
// for every fence this process enforces from now on. It exists only in
// builds with -tags dshfs_testhooks, the e2e test binaries' coverage hook
// (e2e/harness/cover.go): a release build does not contain it.
func SetKernelWritableExtra(dirs []string) {
	kernelWritableExtra = slices.Clone(dirs)
}
