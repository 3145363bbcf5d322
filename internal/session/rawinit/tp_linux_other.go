//go:build linux && !amd64

package rawinit

// threadPointer is not read on this architecture: the first process is
// then a plain copy (unshared).
func threadPointer() (uintptr, bool) { return 0, false }
