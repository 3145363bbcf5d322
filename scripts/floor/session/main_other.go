//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main says the floor has nothing to measure here: its namespaces,
// Landlock and seccomp are Linux's.
func main() {
	fmt.Fprintf(os.Stderr, "session: a floor of Linux's session start; there is none on %s\n", runtime.GOOS)
	os.Exit(1)
}
