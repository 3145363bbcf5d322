//go:build !linux

package testns

import "os"

// Main runs run and exits with its status: no mount namespace here (a
// session's state lives in per-user folders the tests' users own).
func Main(run func() int, folders ...string) { os.Exit(run()) }
