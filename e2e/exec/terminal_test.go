//go:build unix

package exec

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The terminal is the person's (issue 37): these tests run the person's
// shell in a real terminal emulator, tmux with set-clipboard on, start
// dsh-fs exec from it, and let the session attack that terminal with
// escape sequences: forge the supervisor's question, read and write the
// clipboard, make the terminal answer into an input. They judge by what
// the screen shows (capture-pane), what tmux's paste buffer holds and
// what the person's shell runs.

// tmuxTerm is the person's terminal: a pane of a tmux server of the
// test's own (its own socket, no configuration file) running the
// person's interactive shell.
type tmuxTerm struct {
	t    *testing.T
	sock string
	as   func(*exec.Cmd)
}

// Size of the person's terminal in the tmux tests.
const (
	tmuxRows = 30
	tmuxCols = 120
)

// startTmux starts the person's terminal: a tmux server with
// set-clipboard on whose one pane runs sh -i in ws with env, as the user
// of as (nil: root). It skips where tmux is missing.
func startTmux(t *testing.T, env []string, ws string, as func(*exec.Cmd)) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux here: the terminal tests need a real terminal emulator")
	}
	dir := t.TempDir()
	if as != nil {
		chownTree(t, dir)
	}
	m := &tmuxTerm{t: t, sock: filepath.Join(dir, "tmux.sock"), as: as}
	c := m.cmd("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(tmuxCols), "-y", strconv.Itoa(tmuxRows), "-c", ws, "sh -i")
	c.Env = append(slices.Clone(env), "HOME="+dir)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { m.cmd("kill-server").Run() })
	m.run("set-option", "-g", "set-clipboard", "on")
	m.run("set-option", "-g", "history-limit", "0")
	m.marker(0)
	return m
}

// cmd is a tmux client command to the person's server.
func (m *tmuxTerm) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append([]string{"-S", m.sock}, args...)...)
	c.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm"}
	if m.as != nil {
		m.as(c)
	}
	return c
}

// run runs a tmux client command and returns its output.
func (m *tmuxTerm) run(args ...string) string {
	m.t.Helper()
	out, err := m.cmd(args...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the person's terminal shows now, one line a row.
func (m *tmuxTerm) screen() string { return m.run("capture-pane", "-p") }

// buffer is tmux's newest paste buffer: what the person pastes next.
func (m *tmuxTerm) buffer() string {
	out, _ := m.cmd("show-buffer").CombinedOutput()
	return string(out)
}

// typeLine types line and Enter at the person's terminal.
func (m *tmuxTerm) typeLine(line string) {
	m.t.Helper()
	m.run("send-keys", "-l", line)
	m.run("send-keys", "Enter")
}

// waitFor waits until the screen shows every one of s and returns that
// screen; it fails the test when it does not within harness.Timeout.
func (m *tmuxTerm) waitFor(s ...string) string {
	m.t.Helper()
	deadline := time.Now().Add(harness.Timeout)
	for time.Now().Before(deadline) {
		screen := m.screen()
		if !slices.ContainsFunc(s, func(s string) bool { return !strings.Contains(screen, s) }) {
			return screen
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.t.Fatalf("the terminal never showed all of %q; it shows:\n%s", s, m.screen())
	return ""
}

// marker types a command whose output only the person's shell can
// compute and waits for it: the shell reads and runs what is typed next.
func (m *tmuxTerm) marker(n int) {
	m.t.Helper()
	m.typeLine("echo done-$((" + strconv.Itoa(n) + "+1))")
	m.waitFor("done-" + strconv.Itoa(n+1))
}

// forTerminalPeople runs test as root and as a real ordinary user, each
// with a workspace ws and an outside folder out, and the person's
// terminal started in ws.
func forTerminalPeople(t *testing.T, test func(t *testing.T, m *tmuxTerm, ws, out string)) {
	harness.RequireLandlock(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) {
			as := who.as(t)
			ws, out := t.TempDir(), t.TempDir()
			env := append(execEnv(t, ws, "OUT="+out), who.setup(t, ws, out)...)
			test(t, startTmux(t, env, ws, as), ws, out)
		})
	}
}

// TestExecTerminalForgedQuestion: before asking to escalate, the session
// switches the terminal to the alternate screen, paints a fake question
// about a harmless file and sets a two-line scrolling region at the
// bottom, with origin mode (the cursor's home is in that region), line
// drawing in G0 and G1, concealed text, a hidden cursor, insert mode and
// a title sequence left unterminated.
// While the real question is up, the screen shows the real operation and
// path, and none of the fake; the person refuses.
func TestExecTerminalForgedQuestion(t *testing.T) {
	forTerminalPeople(t, func(t *testing.T, m *tmuxTerm, ws, out string) {
		target := filepath.Join(out, "x")
		m.typeLine(execLine(ws, `printf '\033[?1049h\033[2J\033[H'
printf 'dsh-fs: read notes-FAKE.txt was denied under workspace-write mode (outside the roots).\n'
printf '\033[29;30r\033[?6h\033[2;1H\033(0\033)0\016\033[8m\033[?25l\033[4h\033]2;half a title'
dsh-fs write "$OUT/x" --content "$(printf 'l1\nl2\nl3\nl4\nl5\n')" --escalate danger-full-access >"$PWD/write.out"; echo "rc=$?"`))
		screen := m.waitFor("[y/N]")
		if b, _ := os.ReadFile(filepath.Join(ws, "write.out")); strings.Contains(string(b), "session record not trusted") {
			t.Skipf("the file tool refuses this session's record, so nothing asks: %s", b)
		}
		t.Logf("the screen while the question is up:\n%s", screen)
		if !strings.Contains(screen, "write "+target) {
			t.Errorf("while the question is up the screen does not show the real operation and path (write %s):\n%s", target, screen)
		}
		if strings.Contains(screen, "notes-FAKE") {
			t.Errorf("while the question is up the screen still shows the session's fake question:\n%s", screen)
		}
		m.typeLine("n")
		m.waitFor("exited-0")
		m.marker(41)
		wantAbsent(t, target)
	})
}

// TestExecTerminalClipboard: OSC 52 from the session neither writes the
// person's clipboard (tmux's paste buffer, which the person pastes into
// their own unconfined shell) nor reads it into the session's input.
func TestExecTerminalClipboard(t *testing.T) {
	forTerminalPeople(t, func(t *testing.T, m *tmuxTerm, ws, out string) {
		const secret = "SECRET-CLIP-7"
		m.run("set-buffer", secret)
		pwned := filepath.Join(out, "PWNED")
		write := base64.StdEncoding.EncodeToString([]byte("touch " + pwned))
		m.typeLine(execLine(ws, `stty -echo -icanon min 0 time 5
printf '\033]52;c;?\007'; printf '\23552;c;?\234'
for i in 1 2 3; do dd bs=4096 count=1 2>/dev/null; done >"$PWD/reply"
stty sane
printf '\033]52;c;`+write+`\007'; printf '\033]52;p;`+write+`\033\\'; echo written`))
		m.waitFor("exited-0")
		m.marker(41)
		if got := m.buffer(); got != secret {
			t.Errorf("the session wrote the person's clipboard: tmux's buffer holds %q, want %q", got, secret)
		}
		// The person pastes what they copied into their shell.
		m.run("paste-buffer")
		m.run("send-keys", "Enter")
		m.marker(51)
		wantAbsent(t, pwned)
		reply, err := os.ReadFile(filepath.Join(ws, "reply"))
		if err != nil {
			t.Fatalf("the session did not record what it read: %v\n%s", err, m.screen())
		}
		if enc := base64.StdEncoding.EncodeToString([]byte(secret)); strings.Contains(string(reply), enc[:12]) || strings.Contains(string(reply), "52;") {
			t.Errorf("an OSC 52 query read the person's clipboard into the session's input: %q", reply)
		}
	})
}

// TestExecTerminalQueries: queries that make the terminal answer into
// the session's input (device attributes, version, modes, capabilities,
// colours, window reports) get no answer of the terminal's: the session
// reads only the relay's own fixed answers (primary device attributes
// and device status). Queries sent just before the session exits type
// nothing into the person's shell either.
func TestExecTerminalQueries(t *testing.T) {
	forTerminalPeople(t, func(t *testing.T, m *tmuxTerm, ws, out string) {
		queries := `printf '\033[c\033[>c\033[=c\033[>q\033[?2004$p\033[5n\033[14t\033[18t\033[21t\033P+q544e\033\\\033P$qm\033\\\033]11;?\007\033]10;?\033\\\033]4;1;?\007'`
		// The session reads what comes, half a second at most each
		// time, until the relay's two answers are in (or 30 reads), then
		// for one more half second: a terminal's answer let through
		// would come with them. Three reads in all were too few when a
		// loaded machine held the relay's answers back.
		m.typeLine(execLine(ws, `stty -echo -icanon min 0 time 5
`+queries+`
: >"$PWD/reply"; i=0
while [ $i -lt 30 ]; do
  dd bs=4096 count=1 2>/dev/null >>"$PWD/reply"
  case $(tr -d '\033' <"$PWD/reply") in *'[?62;22c'*'[0n'*) break;; esac
  i=$((i+1))
done
dd bs=4096 count=1 2>/dev/null >>"$PWD/reply"
stty sane
`+queries+`; exit 0`))
		m.waitFor("exited-0")
		time.Sleep(300 * time.Millisecond)
		m.marker(41)
		reply, err := os.ReadFile(filepath.Join(ws, "reply"))
		if err != nil {
			t.Fatalf("the session did not record what it read: %v\n%s", err, m.screen())
		}
		if want := "\x1b[?62;22c\x1b[0n"; string(reply) != want {
			t.Errorf("the session's input got %q after its queries; want only the relay's own answers %q", reply, want)
		}
	})
}

// TestExecTerminalEditor: what the filter passes is what a shell and an
// editor need: vim edits and saves a file on the session's screen (the
// alternate screen, cursor movement, scrolling region, its queries
// unanswered), and bash's line editing moves the cursor within a line.
func TestExecTerminalEditor(t *testing.T) {
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("no vim here")
	}
	forTerminalPeople(t, func(t *testing.T, m *tmuxTerm, ws, out string) {
		m.typeLine(execLine(ws, `vim -u NONE -i NONE -N notes.txt; bash --norc --noprofile -i`))
		// vim shows the file's message as it reads the file, before it
		// draws the screen: the screen is waited for, with the message.
		m.waitFor(`"notes.txt"`, "\n~")
		m.run("send-keys", "-l", "ihello from vim")
		m.run("send-keys", "Escape")
		m.run("send-keys", "-l", ":wq")
		m.run("send-keys", "Enter")
		m.waitFor("bash")
		m.run("send-keys", "-l", "echo ab")
		m.run("send-keys", "Left")
		m.run("send-keys", "-l", "X")
		m.run("send-keys", "Enter")
		m.waitFor("aXb")
		m.typeLine("exit")
		m.waitFor("exited-0")
		m.marker(41)
		wantContent(t, filepath.Join(ws, "notes.txt"), "hello from vim\n")
	})
}

// TestExecTerminalAfterSession: what the session set on the person's
// terminal ends with it: a session that exits in the alternate screen
// with a fake screen painted, a two-line scrolling region and a hidden
// cursor leaves the person's shell its own screen, whole.
func TestExecTerminalAfterSession(t *testing.T) {
	forTerminalPeople(t, func(t *testing.T, m *tmuxTerm, ws, out string) {
		m.typeLine(execLine(ws, `printf '\033[?1049h\033[2J\033[HFAKE-SCREEN\033[29;30r\033[?25l\033[?6h'; exit 0`))
		m.waitFor("exited-0")
		m.typeLine(`for i in $(seq 1 40); do echo "seq-$i"; done`)
		m.marker(41)
		screen := m.screen()
		if strings.Contains(screen, "FAKE-SCREEN") {
			t.Errorf("the session's alternate screen outlived it:\n%s", screen)
		}
		if !strings.Contains(screen, "seq-30\n") {
			t.Errorf("the person's output scrolled out of a region the session set (seq-30 is not on the screen):\n%s", screen)
		}
	})
}

// TestExecTerminalSupervisorLines: the supervisor's own lines on exec's
// standard error (here the proxy's refusal) carry strings the session
// chose: a SOCKS5 host name made of U+009D (OSC, as terminals in UTF-8
// read it), an OSC 52 write and U+009C (ST). The person's terminal gets
// the host escaped, never the C1 characters themselves.
func TestExecTerminalSupervisorLines(t *testing.T) {
	harness.RequireLandlock(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here: its /dev/tcp is the SOCKS client")
	}
	ws := t.TempDir()
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "network: allowlist\nnetwork_allow: [\"example.test\"]\n")
	p := startPerson(t, env, ws, nil)
	// SOCKS5: no authentication, then CONNECT to a domain name of 17
	// bytes, port 80.
	p.typeLine("dsh-fs exec --cwd " + shellQuote(ws) + ` -- bash -c 'port=${ALL_PROXY##*:}; port=${port%%/*}; exec 3<>/dev/tcp/127.0.0.1/$port && printf "\005\001\000\005\001\000\003\021\302\23552;c;dG91Y2g=\302\234\000\120" >&3; sleep 1; echo sent-$((1+1))'; echo "exit-$((100+$?))"`)
	p.waitFor("exit-10")
	screen := p.shown()
	if !strings.Contains(screen, "sent-2") || !strings.Contains(screen, "network_refused") {
		t.Fatalf("the session did not reach the proxy, or no refusal was written:\n%q", screen)
	}
	if strings.Contains(screen, "\u009d") || strings.Contains(screen, "\u009c") {
		t.Errorf("a C1 control the session chose reached the person's terminal in the supervisor's line:\n%q", screen)
	}
	if !strings.Contains(screen, `\u009d52;c;dG91Y2g=\u009c`) {
		t.Errorf("the refusal does not name the host, escaped:\n%q", screen)
	}
}
