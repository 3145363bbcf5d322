//go:build !linux

package exec

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

// openPTY opens a pseudo-terminal pair: the master, which plays the
// person, and the path of the slave, which becomes the child's terminal.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	name := slave.Name()
	slave.Close()
	return master, name
}
