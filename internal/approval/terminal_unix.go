//go:build unix

package approval

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/tty"
)

// ttyPath is the controlling terminal; never taken from the environment,
// where the model could point it at a file that says "y".
const ttyPath = "/dev/tty"

// openTerminal opens the controlling terminal, to read the answer from
// and write the question to: one file here.
func openTerminal() (in, out *os.File, err error) {
	term, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	return term, term, err
}

// approverPath is the search path of an approval_command's own children;
// the program itself is named by an absolute path.
const approverPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// AskAtTerminal is the supervisor's approver: it asks the person at the
// dsh-fs exec supervisor's controlling terminal, as AskTTY does. The
// session's shell may have made another process group the terminal's
// foreground (an interactive bash running the call), so the supervisor
// takes the foreground for the question and gives it back after.
func AskAtTerminal(req EscalationRequest) error {
	term, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("escalation to %s refused: no terminal at the dsh-fs exec supervisor to ask (approval supervisor; a harness without one sets approval: command)", req.To)
	}
	defer term.Close()
	fd := int(term.Fd())
	// A background process group that sets the foreground is sent
	// SIGTTOU unless it ignores it.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	if fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
		if me := unix.Getpgrp(); fg != me && unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, me) == nil {
			defer unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, fg)
		}
	}
	return AskOnTerminal(term, term, req)
}

// AskOnTerminal is the supervisor's approver while dsh-fs exec relays the
// person's terminal: the relay, paused, hands over the person's terminal
// (read from in, written to out) in its own modes, and nothing of the
// session reaches it until the answer is read. What was typed before the
// question is discarded first, so it cannot answer it. The question
// takes the screen (askOnScreen): whatever the session left on the
// terminal, the person answers what they see.
func AskOnTerminal(in, out *os.File, req EscalationRequest) error {
	tty.FlushInput(in)
	if err := askOnScreen(in, out, req); err != nil {
		return fmt.Errorf("escalation to %s refused: %w", req.To, err)
	}
	return nil
}

// errNotApproved is askOnScreen's answer when the person did not say yes.
var errNotApproved = errors.New("not approved at the supervisor's terminal")

// askOnScreen draws req's question on the terminal out, on a screen of
// its own from the top, in a state the session did not choose
// (tty.DrawQuestion): what is asked (the operation, the paths) whole,
// the change cut to the rows left with a count of what was cut, then
// [y/N]. It reads the answer from in, gives the screen back and leaves a
// line on the normal screen that says what was decided. A question
// whose head does not fit on the terminal is refused unasked.
func askOnScreen(in io.Reader, out *os.File, req EscalationRequest) error {
	head, body, ask := promptParts(req)
	if err := tty.DrawQuestion(out, head, body, ask); err != nil {
		tty.EndQuestion(out, "dsh-fs: escalation refused: "+err.Error()+"; make the terminal larger and retry")
		return fmt.Errorf("not approved: %w", err)
	}
	answer, _ := bufio.NewReader(in).ReadString('\n')
	yes := isYes(answer)
	verdict := "refused"
	if yes {
		verdict = "allowed"
	}
	tty.EndQuestion(out, "dsh-fs: escalation "+verdict+": "+strings.TrimPrefix(head[0], "dsh-fs: "))
	if !yes {
		return errNotApproved
	}
	return nil
}
