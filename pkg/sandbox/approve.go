package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ttyPath is the controlling terminal; never taken from the environment,
// where the model could point it at a file that says "y".
const ttyPath = "/dev/tty"

// askTTY asks the person at the controlling terminal to approve req and
// refuses when there is no terminal or the answer is not yes.
func askTTY(req EscalationRequest) error {
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("escalation to %s refused: no terminal to ask", req.To)
	}
	defer tty.Close()
	fmt.Fprintf(tty, "dsh-fs: %s %s was denied under %s mode (%s).\nAllow this one call under %s mode? [y/N] ",
		req.Op, req.Path, req.From, req.Reason, req.To)
	answer, _ := bufio.NewReader(tty).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("escalation to %s refused: not approved at the terminal", req.To)
}
