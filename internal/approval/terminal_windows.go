package approval

import (
	"fmt"
	"os"
)

// openTerminal opens the console: its input (CONIN$) to read the answer
// from, its output (CONOUT$) to write the question to. Neither name is
// taken from the environment.
func openTerminal() (in, out *os.File, err error) {
	in, err = os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	out, err = os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, out, nil
}

// approverPath is the search path of an approval_command's own children
// on Windows; the program itself is named by an absolute path.
const approverPath = `C:\Windows\System32;C:\Windows`

// AskAtTerminal refuses: it is the dsh-fs exec supervisor's approver, and
// Windows has no dsh-fs exec session (run dsh-fs inside WSL2).
func AskAtTerminal(req EscalationRequest) error {
	return fmt.Errorf("escalation to %s refused: no dsh-fs exec supervisor on Windows", req.To)
}

// AskOnTerminal refuses, as AskAtTerminal does.
func AskOnTerminal(_, _ *os.File, req EscalationRequest) error { return AskAtTerminal(req) }
