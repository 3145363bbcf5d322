//go:build dshtrace && linux

package child

import (
	"fmt"
	"os"
	"time"
)

// The start-up trace of a dshtrace build: one line per mark on stderr,
// "dsh-fs-trace PID LABEL UNIXNANO".
func init() {
	mark = func(label string) {
		fmt.Fprintf(os.Stderr, "dsh-fs-trace %d %s %d\n", os.Getpid(), label, time.Now().UnixNano())
	}
}
