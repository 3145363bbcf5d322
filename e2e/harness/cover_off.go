//go:build !dshfs_testhooks

package harness

import (
	"fmt"
	"os"
)

// Without -tags dshfs_testhooks the kernel layer cannot be told to leave
// GOCOVERDIR writable (cover.go), so under go test -cover every child
// that mutated would lose its counters and print an emit error that
// breaks the scripts' stderr checks. Rather than fail hundreds of tests
// for a reason none of them names, the test binary stops at once and
// says what to run. A plain go test sets no GOCOVERDIR and is untouched.
func init() {
	if os.Getenv("GOCOVERDIR") != "" {
		fmt.Fprintln(os.Stderr, "e2e: coverage of the process tests needs the test hook: go test -cover -tags dshfs_testhooks ./e2e/...")
		os.Exit(2)
	}
}
