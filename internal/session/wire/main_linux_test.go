package wire

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/testns"
)

// TestMain runs this package's tests, as root, in a mount namespace of
// their own with an empty tmpfs over the runtime folder (RuntimeBase).
// Their records, some of them of a supervisor that is gone on purpose,
// are then out of the reach of every dsh-fs exec of the machine, whose
// start removes the records of supervisors gone (removeStale), and the
// tests read no record the machine holds.
func TestMain(m *testing.M) { testns.Main(m.Run, RuntimeBase()) }
