// Package readme runs the README's shell blocks as a new user pastes
// them (tests only). It is a package of its own so that its build of the
// release binaries has a test timeout of its own.
package readme

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m, nil) }
