//go:build !dshfs_testhooks

package harness

import (
	"fmt"
	"os"
)

// requireCoverHook stops a test binary that runs dsh-fs under go test
// -cover without -tags dshfs_testhooks. Without the tag the kernel layer
// cannot be told to leave GOCOVERDIR writable (cover.go), so every child
// that mutated would lose its counters and print an emit error that
// breaks the scripts' stderr checks. Rather than fail hundreds of tests
// for a reason none of them names, the binary stops at once and says what
// to run. A plain go test sets no GOCOVERDIR and is untouched, and so are
// packages that only import the harness (e2e/repo): Main calls this.
func requireCoverHook() {
	if os.Getenv("GOCOVERDIR") != "" {
		fmt.Fprintln(os.Stderr, "e2e: coverage of the process tests needs the test hook: go test -cover -tags dshfs_testhooks ./e2e/...")
		os.Exit(2)
	}
}
