//go:build unix

package supervisor

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/tty"
)

// The terminal belongs to the person, and the session ends with CMD
// (docs/design.md §10). exec starts its child in a new session, so CMD
// has no controlling terminal of the person's; when one of exec's
// standard streams is a terminal, that stream is a pseudo-terminal of the
// session's own instead (internal/tty), which exec relays. A stream that is
// not a terminal (`dsh-fs exec bash > log`, a harness's pipes) is passed
// as it is: output written to a file goes to the file, as without exec.

// execFiles returns exec's standard streams as files; a stream that is
// not a file is nil (it cannot be a terminal).
func execFiles(a Options) (stdin, stdout, stderr *os.File) {
	stdin, _ = a.Stdin.(*os.File)
	stdout, _ = a.Stdout.(*os.File)
	stderr, _ = a.Stderr.(*os.File)
	return stdin, stdout, stderr
}

// openRelay readies the relay to the person's terminal when one of
// exec's streams is a terminal; nil when none is. It makes the session's
// pseudo-terminal here, unless the session makes its own (ownTerminal).
func openRelay(a Options, ownTerminal bool) (*tty.Relay, error) {
	if ownTerminal {
		return tty.Prepare(execFiles(a))
	}
	return tty.Open(execFiles(a))
}

// giveTerminal gives child the session's terminal in place of each of
// its standard streams that is a terminal (the person's), and returns
// their descriptors; the first is the controlling terminal of the
// child's new session. Where slave is nil the child makes the terminal
// itself, and those streams are /dev/null until it does.
func giveTerminal(child *exec.Cmd, slave *os.File) []int {
	var streams []int
	take := func(fd int, f any) bool {
		file, _ := f.(*os.File)
		if !tty.IsTerminal(file) {
			return false
		}
		streams = append(streams, fd)
		return true
	}
	// What stands in a terminal stream's place: the slave, or nothing
	// (/dev/null) until the child makes its own.
	var in io.Reader
	var out io.Writer
	if slave != nil {
		in, out = slave, slave
	}
	if take(0, child.Stdin) {
		child.Stdin = in
	}
	if take(1, child.Stdout) {
		child.Stdout = out
	}
	if take(2, child.Stderr) {
		child.Stderr = out
	}
	if len(streams) > 0 && slave != nil {
		child.SysProcAttr.Setctty, child.SysProcAttr.Ctty = true, streams[0]
	}
	return streams
}

// terminalLayer says what holds for the person's terminal in a session
// exec starts from a, for the record and policy; ownNamespace says the
// session has a mount namespace, where its /dev/pts is its own.
func terminalLayer(a Options, ownNamespace bool) (bool, string) {
	seccomp := "; TIOCSTI and TIOCLINUX refused to the whole tree (seccomp)"
	if ownNamespace {
		seccomp += "; /dev/pts shows only the session's own terminals"
	} else {
		seccomp += "; no mount namespace, so the person's terminals can still be opened by name (/dev/pts/N) as their uid allows"
	}
	in, out, errs := execFiles(a)
	if tty.IsTerminal(in) || tty.IsTerminal(out) || tty.IsTerminal(errs) {
		return true, "a pseudo-terminal of the session's own, in a new session, relayed to the person's terminal through a filter that passes what draws on the screen and drops the rest (the clipboard, queries the terminal answers, notifications, window and palette changes); the supervisor's question pauses the relay, has the person's terminal alone and takes its screen, reset and cleared" + seccomp
	}
	return true, "no terminal among exec's streams: a new session without a controlling terminal, the streams as they are" + seccomp
}

// processesLayer says whether the session's processes end with CMD: they
// do in the PID namespace that comes with the session's mount namespace
// (mounts; mountsWhy says why there is none).
func processesLayer(mounts bool, mountsWhy string) (bool, string) {
	if mounts {
		return true, "a PID namespace of the session's own, with its own /proc: when CMD exits, every process it started is killed"
	}
	return false, fmt.Sprintf("not held: processes the session leaves behind outlive it (no PID namespace: %s); they keep only the session's own terminal, which is closed", mountsWhy)
}

// log is where the supervisor's own lines go while the session runs (the
// proxy's refusals, the git guard's report): exec's standard error,
// which may be the person's terminal, outside the relay. A line waits
// while a question is up, so it cannot scroll the question away; and it
// is escaped for a terminal (escapeLog), so a string the session chose (a
// host, a file name) cannot reach the terminal as a control sequence past
// the relay's filter.
func (s *supervisor) log() io.Writer { return logWriter{mu: &s.askMu, w: s.opts.Stderr} }

// logWriter is the writer of log: each Write holds mu, the question's.
type logWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(escapeLog(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeLog returns p, JSON lines, with every character a terminal could
// read as a control written as a JSON escape: ESC, the C1 controls
// (U+0080-U+009F, which terminals in UTF-8 read as ESC sequences: U+009D
// is OSC), bidirectional controls, and bytes that are not UTF-8 (as
// U+FFFD). Inside a JSON string each escape means the same character, so
// the line decodes to the same value; JSON has no such character outside
// its strings.
func escapeLog(p []byte) []byte {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == 0x1b, r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Bidi_Control, r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	return out
}
