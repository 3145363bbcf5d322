// Package approval asks for escalations: the person at a terminal, the
// harness's approval_command, and a host the session's proxy refused. It
// never decides: the fence (package sandbox) decides whether an
// escalation could lift a denial and whether anyone may be asked, and
// calls the functions of the policy.Approver that New makes here.
package approval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// EscalationRequest is what an approver is asked to approve.
type EscalationRequest = policy.EscalationRequest

// New is the approver of a call under policy p that asked to escalate to
// to: approval tty asks at /dev/tty (AskTTY), approval command runs p's
// approval_command (RunCommand). A front end adds what only it knows
// (the supervisor's channel, GrantRefusal, HandOver) before giving it to the
// fence with sandbox.Fence.SetApprover.
func New(p policy.Policy, to policy.Mode) policy.Approver {
	return policy.Approver{
		To:       to,
		Terminal: AskTTY,
		Command: func(req EscalationRequest) error {
			return RunCommand(p.ApprovalCommand, p.ApprovalTimeoutSeconds, p.Home, req)
		},
	}
}

// DefaultApprovalTimeout is how long an approval_command may take, in
// seconds, before the escalation is refused.
const DefaultApprovalTimeout = 60

// AskTTY asks the person at the controlling terminal to approve req and
// refuses when there is no terminal or the answer is not yes. Every
// string the model chose (the path, the diff) is shown with its control
// characters escaped, so it cannot redraw the question.
func AskTTY(req EscalationRequest) error {
	in, out, err := openTerminal()
	if err != nil {
		return fmt.Errorf("escalation to %s refused: no terminal to ask", req.To)
	}
	defer in.Close()
	if out != in {
		defer out.Close()
	}
	if answeredYesOn(in, out, req) {
		return nil
	}
	return fmt.Errorf("escalation to %s refused: not approved at the terminal", req.To)
}

// answeredYesOn puts req's prompt on out and reports whether the line
// read from in was y or yes.
func answeredYesOn(in io.Reader, out io.Writer, req EscalationRequest) bool {
	_, _ = io.WriteString(out, prompt(req))
	answer, _ := bufio.NewReader(in).ReadString('\n')
	return isYes(answer)
}

// isYes reports whether the line answer says y or yes.
func isYes(answer string) bool {
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}

// promptParts is prompt(req) cut for a screen: the head (what is asked
// about), the body (the lines of the change) and the last line, the
// question itself.
func promptParts(req EscalationRequest) (head, body []string, ask string) {
	lines := strings.Split(prompt(req), "\n")
	ask, lines = lines[len(lines)-1], lines[:len(lines)-1]
	for i, l := range lines {
		if l == changeLabel {
			return lines[:i+1], lines[i+1:], ask
		}
	}
	return lines, nil, ask
}

// changeLabel opens the change in a prompt.
const changeLabel = "The change:"

// Question is the prompt's question without its [y/N]: for an approver
// that asks in its own way (an MCP client's elicitation).
func Question(req EscalationRequest) string {
	return strings.TrimSuffix(prompt(req), " [y/N] ")
}

// prompt is the question put to a person: what was denied and why, the
// change itself, and whether to allow it once.
func prompt(req EscalationRequest) string {
	var b strings.Builder
	if req.Op == policy.OpNetwork {
		fmt.Fprintf(&b, "dsh-fs: the session's shell asked to connect to the network host %s, which the network policy refuses (%s).\n", escapeControl(req.Path), req.Reason)
		b.WriteString("This is a network host, not a file: nothing is written.\n")
		b.WriteString("Allow connections to it for the rest of this session? [y/N] ")
		return b.String()
	}
	fmt.Fprintf(&b, "dsh-fs: %s %s was denied under %s mode (%s).\n", req.Op, escapeControl(req.Path), req.From, req.Reason)
	if req.Resolved != "" && req.Resolved != req.Path {
		fmt.Fprintf(&b, "It resolves to %s.\n", escapeControl(req.Resolved))
	}
	writePaths(&b, req.Paths)
	writeContext(&b, req.EscalationContext)
	if req.DiffText != "" {
		b.WriteString(changeLabel + "\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(req.DiffText, "\n"), "\n") {
			b.WriteString("  " + escapeControl(strings.TrimSuffix(line, "\n")) + "\n")
		}
	}
	fmt.Fprintf(&b, "Allow this one call under %s mode? [y/N] ", req.To)
	return b.String()
}

// writePaths names, one a line, every path the call would change and
// what it does there, as resolved: what the person approves is exactly
// this list.
func writePaths(b *strings.Builder, paths []policy.EscalationPath) {
	if len(paths) == 0 {
		return
	}
	if len(paths) == 1 {
		b.WriteString("It changes exactly this path, and nothing else:\n")
	} else {
		fmt.Fprintf(b, "It changes exactly these %d paths, and nothing else:\n", len(paths))
	}
	for _, p := range paths {
		fmt.Fprintf(b, "  %-9s %s", p.Op, escapeControl(p.Resolved))
		if p.Path != p.Resolved {
			fmt.Fprintf(b, " (given as %s)", escapeControl(p.Path))
		}
		b.WriteString("\n")
	}
}

// writeContext says where the call came from and the model's reason,
// each labelled as what it is: the command line is what the calling
// process says of itself, and the reason is the model's own words.
func writeContext(b *strings.Builder, c policy.EscalationContext) {
	if c.Session != "" {
		fmt.Fprintf(b, "From dsh-fs exec session %s.\n", escapeControl(c.Session))
	}
	if c.Cwd != "" {
		fmt.Fprintf(b, "Working directory: %s\n", escapeControl(c.Cwd))
	}
	if len(c.Caller) > 0 {
		args := make([]string, len(c.Caller))
		for i, a := range c.Caller {
			args[i] = escapeControl(a)
		}
		fmt.Fprintf(b, "Command line (as the calling process gives it): %s\n", strings.Join(args, " "))
	}
	if c.ModelReason != "" {
		fmt.Fprintf(b, "The model's reason, in its own words (not checked): %s\n", escapeControl(c.ModelReason))
	}
}

// escapeControl returns s with every character that could move the
// cursor, recolour, hide or reorder text on a terminal written as an
// escape: C0 and C1 controls and DEL as \r, \x1b, \u0085, bidirectional
// overrides as \u202e, and bytes that are not UTF-8 as \xff. Printable
// text, tabs included, stays as it is.
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, unicode.Is(unicode.Bidi_Control, r), r == '\u2028', r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// approverEnv is the whole environment an approval_command runs with. The
// session sets dsh-fs's own environment, so none of it is passed on: a
// PATH, LD_PRELOAD or HOME of the model's choosing could make a program
// of its own answer for the approver. Only the locale and time zone pass.
func approverEnv(home string) []string {
	env := []string{"PATH=" + approverPath}
	if home != "" {
		env = append(env, "HOME="+home)
	}
	for _, k := range []string{"LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// RunCommand runs the harness's approver, argv (an absolute path
// and its arguments, from a trusted file), with req as one JSON object on
// its standard input, in the environment approverEnv makes: exit status 0
// approves; anything else, a failure to start, or no answer within
// timeout seconds refuses. The command's output is passed to dsh-fs's
// standard error, never to the result.
func RunCommand(argv []string, timeout int, home string, req EscalationRequest) error {
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return fmt.Errorf("escalation to %s refused: approval_command must name its program by an absolute path", req.To)
	}
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("escalation to %s refused: %v", req.To, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout)*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = approverEnv(home)
	c.Dir = "/"
	c.Stdin = bytes.NewReader(append(body, '\n'))
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	// The approver's own children must not keep it waiting past the
	// timeout either.
	c.WaitDelay = time.Second
	err = c.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("escalation to %s refused: approval_command gave no answer within %d s", req.To, timeout)
	case err == nil:
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("escalation to %s refused: approval_command exited with status %d", req.To, ee.ExitCode())
	}
	return fmt.Errorf("escalation to %s refused: approval_command: %v", req.To, err)
}
