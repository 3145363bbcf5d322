//go:build !linux

package exec

import (
	"fmt"
	"os"
	"runtime"
)

// uringProbe is the test-only program `uring-probe` where there is no
// io_uring: it is refused, always.
func uringProbe() {
	fmt.Println("io_uring refused: no io_uring on " + runtime.GOOS)
	os.Exit(1)
}
