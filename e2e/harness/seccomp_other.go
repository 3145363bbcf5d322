//go:build !linux

package harness

import (
	"fmt"
	"os"
	"runtime"
)

// seccompErrno is the seccomp-errno helper where there is no seccomp: it
// cannot set the filter up, and exits 100, as it does on Linux then.
func seccompErrno() {
	fmt.Fprintf(os.Stderr, "seccomp-errno: no seccomp filter on %s\n", runtime.GOOS)
	os.Exit(100)
}
