//go:build unix

package race

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMain makes this test binary dsh-fs (harness.Main) and exchange-loop,
// the attacker of the exchange races.
func TestMain(m *testing.M) {
	harness.Main(m, map[string]func(){"exchange-loop": exchangeLoop})
}
