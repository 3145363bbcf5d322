//go:build !linux

package layout

import "runtime"

// MountLayer is false here: there are no mount namespaces on this OS, and
// a session's protection comes from the OS's own sandbox (macOS: the
// Seatbelt profile), never from a mount layer.
func MountLayer() (ok bool, why string) {
	return false, "no mount namespace on " + runtime.GOOS
}

// ReadOnlyTree is false here: there is no mount layer to make the tree
// read-only with (MountLayer).
func ReadOnlyTree() (ok bool, why string) {
	why = readOnlyTreeWhy()
	return false, why
}

// readOnlyTreeWhy says why the read-only tree cannot be made here: there
// is no mount layer.
func readOnlyTreeWhy() string { return "no mount layer on " + runtime.GOOS }
