//go:build unix

package exec

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMain makes this test binary dsh-fs (harness.Main) and the helper
// programs only the exec tests run inside a session.
func TestMain(m *testing.M) {
	harness.Main(m, map[string]func(){
		"broker-send":  brokerSend,
		"unix-dial":    unixDial,
		"unix-serve":   unixServe,
		"tcp-dial":     tcpDial,
		"fake-npm":     fakeNpm,
		"tiocsti-push": tiocstiPush,
		"tty-thief":    ttyThief,
		"uring-probe":  uringProbe,
		"go-writefile": goWriteFile,
	})
}
