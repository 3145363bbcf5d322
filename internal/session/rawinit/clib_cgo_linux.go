//go:build linux && cgo

package rawinit

// cLibrary says the program runs a C library's threads, whose rseq area
// the kernel writes in a forked child (unshared).
const cLibrary = true
