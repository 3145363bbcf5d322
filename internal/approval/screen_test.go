//go:build unix

package approval

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestAskOnScreen: on a real terminal of 12 rows the question takes the
// screen (an alternate screen of its own, the scrolling region reset),
// puts the operation and path on the first row, cuts a long change with
// a count, puts [y/N] last, and after the answer gives the screen back
// with a line saying what was decided.
func TestAskOnScreen(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 12, Col: 70})
	var diff strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&diff, "+line %d\n", i)
	}
	req := EscalationRequest{Op: "write", Path: "/outside/x", From: policy.WorkspaceWrite, To: policy.DangerFullAccess, Reason: "outside the roots", DiffText: diff.String()}
	shown := make(chan string)
	go func() {
		b, _ := io.ReadAll(master)
		shown <- string(b)
	}()
	in, w, _ := os.Pipe()
	w.WriteString("n\n")
	w.Close()
	err = askOnScreen(in, slave, req)
	slave.Close()
	screen := <-shown
	if err == nil {
		t.Fatal("no answered yes")
	}
	for _, want := range []string{"\x1b[?1049h", "\x1b[r", "\x1b[?6l", "\x1b[1;1Hdsh-fs: write /outside/x was denied", "… 33 more lines not shown", "\x1b[12;1HAllow this one call", "\x1b[?1049l", "dsh-fs: escalation refused: write /outside/x"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal did not get %q: %q", want, screen)
		}
	}
	if strings.Contains(screen, "\x1b[13;") {
		t.Errorf("the question was drawn past the last row: %q", screen)
	}
}
