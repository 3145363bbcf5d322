package rawinit

import (
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestTerminal: a pseudo-terminal given as Files and Ctty becomes the
// first process's controlling terminal, and CMD's process group its
// foreground: in an init's session CMD leads a group of its own, alone
// it leads the session.
func TestTerminal(t *testing.T) {
	needRoot(t)
	for _, init := range []bool{true, false} {
		name := map[bool]string{true: "init", false: "alone"}[init]
		t.Run(name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer ptmx.Close()
			fd := int(tty.Fd())
			s := Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", `read pid comm state ppid pgrp sid tty tpgid rest < /proc/self/stat; echo "$pgrp $sid $tty $tpgid"`},
				Init: init, MountProc: init, Session: true, Ctty: 0, Files: []int{fd, fd, fd}}
			p, err := startIn(t, s, tty)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(ptmx) // EIO once every holder of the terminal closed it
			if code, _, _ := p.Wait(); code != 0 {
				t.Fatalf("status %d: %s", code, b)
			}
			f := strings.Fields(string(b))
			if len(f) != 4 {
				t.Fatalf("CMD said %q", b)
			}
			pgrp, sid, ttyNr, tpgid := f[0], f[1], f[2], f[3]
			if ttyNr == "0" || tpgid != pgrp {
				t.Errorf("CMD's terminal %s, its foreground %s: want a terminal whose foreground is CMD's group %s", ttyNr, tpgid, pgrp)
			}
			if leads := sid == pgrp; leads == init {
				t.Errorf("CMD's group %s, its session %s: with Init=%v CMD leads the session %v", pgrp, sid, init, !init)
			}
		})
	}
}
