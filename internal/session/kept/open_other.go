//go:build !unix

package kept

import (
	"errors"
	"os"
	"runtime"
)

// Kept answers are a dsh-fs exec session's, and no session runs here
// (on Windows, dsh-fs runs the shell inside WSL2): nothing is read, and
// nothing is kept.

// openPrivate reads nothing here.
func openPrivate(string) (*os.File, int64, bool) { return nil, 0, false }

// lockFile refuses here.
func lockFile(string) (*os.File, error) {
	return nil, errors.New("no kept answers on " + runtime.GOOS)
}
