//go:build unix

package exec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// openPTYPair opens a fresh pseudo-terminal (openPTY) and its slave
// side; the caller closes the slave, the master goes with the test.
func openPTYPair(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, slavePath := openPTY(t)
	slave, err := os.OpenFile(slavePath, os.O_RDWR, 0)
	if err != nil {
		t.Skipf("cannot open %s: %v", slavePath, err)
	}
	return master, slave
}

// readScreen reads everything the terminal of master shows, from now on,
// and returns what it has shown so far.
func readScreen(master *os.File) func() string {
	shown, _ := readScreenUntilHangup(master)
	return shown
}

// readScreenUntilHangup is readScreen that also says when the reading
// ended: hungUp is closed once the master reads an error, which it does
// (EIO) only when every holder of the slave has closed it and every byte
// written to the slave before has been read. That is the screen's last
// state, without guessing how long the reader needs to catch up.
func readScreenUntilHangup(master *os.File) (shown func() string, hungUp <-chan struct{}) {
	var mu sync.Mutex
	var screen bytes.Buffer
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}, ended
}

// finalScreen closes the test's own copy of the slave, once the child
// that had the terminal has exited, and returns everything the terminal
// showed: it waits until the master has read the last byte (hungUp, from
// readScreenUntilHangup). A process that still holds the slave fails
// the test after harness.Timeout, with what was shown by then.
func finalScreen(t *testing.T, slave *os.File, shown func() string, hungUp <-chan struct{}) string {
	t.Helper()
	slave.Close()
	select {
	case <-hungUp:
	case <-time.After(harness.Timeout):
		t.Errorf("the terminal is still open %v after its process exited: a process left behind holds it", harness.Timeout)
	}
	return shown()
}

// ttyRun is what a dsh-fs call run under a pseudo-terminal did.
type ttyRun struct {
	// screen is everything the terminal showed: the prompt, the echo of
	// the answer and, with stdout on the terminal, the result.
	screen string
	// prompted is set when the terminal showed "[y/N]".
	prompted bool
	code     int
	// stdout holds the child's stdout and stderr, which are not the
	// terminal.
	stdout string
}

// runUnderTTY runs dsh-fs with args in a new session whose controlling
// terminal is a fresh pseudo-terminal (its stdin too), as a person at a
// terminal would, or a model that made one. When the terminal shows a
// "[y/N]" prompt, answer is typed into it. A call that exits without a
// prompt is not waited on for one.
func runUnderTTY(t *testing.T, env []string, ws, answer string, args ...string) ttyRun {
	t.Helper()
	bin := harness.Bin(t)
	master, slave := openPTYPair(t)
	defer slave.Close()

	c := harness.Cmd(bin, env, ws, args...)
	var stdout bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = slave, &stdout, &stdout
	// A new session whose controlling terminal is the slave: the
	// child's /dev/tty is our pseudo-terminal.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = c.Wait()
		close(exited)
	}()

	shown, hungUp := readScreenUntilHangup(master)

	var r ttyRun
	deadline := time.After(harness.Timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-deadline:
			c.Process.Kill()
			<-exited
			t.Fatalf("still running after %v; the terminal shows %q", harness.Timeout, shown())
		case <-tick.C:
			if !r.prompted && strings.Contains(shown(), "[y/N]") {
				r.prompted = true
				master.Write([]byte(answer))
			}
		}
	}
	if waitErr != nil {
		r.code = c.ProcessState.ExitCode()
	}
	r.screen, r.stdout = finalScreen(t, slave, shown, hungUp), stdout.String()
	if strings.Contains(r.screen, "[y/N]") {
		r.prompted = true
	}
	return r
}

// TestEscalateTTY runs a denied write with --escalate under a real
// controlling terminal, with the trusted opt-in approval: tty: the person
// answers the prompt, "y" grants this one call and anything else refuses
// it with reason "escalation not approved".
func TestEscalateTTY(t *testing.T) {
	for _, tc := range []struct {
		answer    string
		wantCode  int
		escalated bool
	}{
		{"y\n", 0, true},
		{"n\n", 3, false},
		{"\n", 3, false},
	} {
		t.Run(strings.TrimSpace("answer "+tc.answer), func(t *testing.T) {
			dir := t.TempDir()
			ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
			harness.WriteTree(t, dir, map[string]string{"ws/.keep": "", "outside/.keep": ""})
			env := harness.Env(t, ws)
			harness.WriteSystemConfig(t, env, "approval: tty\n")

			r := runUnderTTY(t, env, ws, tc.answer, "write", "../outside/x.txt", "--content", "approved\n", "--escalate", "danger-full-access")
			if !r.prompted {
				t.Fatalf("no prompt on the terminal; it shows %q; result %s", r.screen, r.stdout)
			}
			if !strings.Contains(r.screen, "write ../outside/x.txt") || !strings.Contains(r.screen, "danger-full-access") {
				t.Errorf("the prompt does not say what it asks: %q", r.screen)
			}
			if r.code != tc.wantCode {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.wantCode, r.stdout)
			}
			_, statErr := os.Stat(filepath.Join(outside, "x.txt"))
			if written := statErr == nil; written != tc.escalated {
				t.Errorf("outside/x.txt written = %v, want %v", written, tc.escalated)
			}
			if got := strings.Contains(r.stdout, `"escalated":true`); got != tc.escalated {
				t.Errorf("result %s: escalated = %v, want %v", r.stdout, got, tc.escalated)
			}
			if !tc.escalated && !strings.Contains(r.stdout, `"reason":"escalation not approved"`) {
				t.Errorf("a refusal should have reason \"escalation not approved\": %s", r.stdout)
			}
		})
	}
}

// TestEscalateTTYShowsDiff: the prompt shows the bounded diff of the write
// it asks about, so the person approves a content, not only a path.
func TestEscalateTTYShowsDiff(t *testing.T) {
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	harness.WriteTree(t, dir, map[string]string{"ws/.keep": "", "outside/x.txt": "old-line-17\n"})
	env := harness.Env(t, ws)
	harness.WriteSystemConfig(t, env, "approval: tty\n")

	r := runUnderTTY(t, env, ws, "n\n", "write", "../outside/x.txt", "--overwrite", "--content", "new-line-42\n", "--escalate", "danger-full-access")
	if !r.prompted {
		t.Fatalf("no prompt on the terminal; it shows %q; result %s", r.screen, r.stdout)
	}
	prompt, _, _ := strings.Cut(r.screen, "[y/N]")
	for _, want := range []string{"-old-line-17", "+new-line-42"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt does not show the diff line %q: %q", want, prompt)
		}
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3: %s", r.code, r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "x.txt")); string(b) != "old-line-17\n" {
		t.Errorf("outside/x.txt = %q after a refusal", b)
	}
}

// TestEscalateTTYEscapesPath: a model-chosen path carrying a carriage
// return, "erase line" and "conceal" escapes (a fake harmless question
// drawn over the real one) reaches the terminal escaped: the raw ESC byte
// never, its escaped spelling instead.
func TestEscalateTTYEscapesPath(t *testing.T) {
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	harness.WriteTree(t, dir, map[string]string{"ws/.keep": "", "outside/.keep": ""})
	env := harness.Env(t, ws)
	harness.WriteSystemConfig(t, env, "approval: tty\n")

	// The "/" of "[y/N]" makes the name a path in a folder that does not
	// exist: --mkdir, or the write would fail before anyone is asked.
	name := "x\r\x1b[2Kdsh-fs: read notes.txt? [y/N] \x1b[8m.txt"
	r := runUnderTTY(t, env, ws, "n\n", "write", "../outside/"+name, "--content", "pwned\n", "--mkdir", "--escalate", "danger-full-access")
	if !r.prompted {
		t.Fatalf("no prompt on the terminal; it shows %q; result %s", r.screen, r.stdout)
	}
	if strings.Contains(r.screen, "\x1b") {
		t.Errorf("a raw ESC reached the terminal: %q", r.screen)
	}
	if !strings.Contains(r.screen, `\x1b[2K`) || !strings.Contains(r.screen, `\x1b[8m`) {
		t.Errorf("the terminal does not show the escapes escaped: %q", r.screen)
	}
	// The terminal turns each "\n" into "\r\n"; any other "\r" came from
	// the path.
	if strings.Contains(strings.ReplaceAll(r.screen, "\r\n", "\n"), "\r") {
		t.Errorf("a raw carriage return reached the terminal: %q", r.screen)
	}
	if !strings.Contains(r.screen, `\r`) && !strings.Contains(r.screen, `\x0d`) {
		t.Errorf("the terminal does not show the carriage return escaped: %q", r.screen)
	}
	if names := harness.DirNames(t, outside); len(names) != 1 || names[0] != ".keep" {
		t.Errorf("outside holds %q after a refusal", names)
	}
}

// TestEscalateTTYDefaultRefused: under the default approval (the person
// at a dsh-fs exec supervisor's terminal), a terminal the call happens to
// have is not asked: a model can make one and answer it. The escalation
// is refused, no prompt is shown, nothing is written. Were a prompt shown,
// this test would answer "y" as such a model would.
func TestEscalateTTYDefaultRefused(t *testing.T) {
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	harness.WriteTree(t, dir, map[string]string{"ws/.keep": "", "outside/.keep": ""})
	env := harness.Env(t, ws)

	r := runUnderTTY(t, env, ws, "y\n", "write", "../outside/x.txt", "--content", "pwned\n", "--escalate", "danger-full-access")
	if r.prompted {
		t.Errorf("the default approval asked the call's own terminal: %q", r.screen)
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3: %s", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, `"reason":"escalation not approved"`) {
		t.Errorf("want reason \"escalation not approved\": %s", r.stdout)
	}
	if names := harness.DirNames(t, outside); len(names) != 1 || names[0] != ".keep" {
		t.Errorf("outside holds %q after a refusal", names)
	}
}

// TestPrettyOnTerminal: on a terminal the result is indented for a person;
// anywhere else it is one line (every other test reads it from a pipe).
func TestPrettyOnTerminal(t *testing.T) {
	bin := harness.Bin(t)
	ws := t.TempDir()
	harness.WriteTree(t, ws, map[string]string{"f.txt": "x\n"})
	master, slave := openPTYPair(t)
	defer slave.Close()
	c := harness.Cmd(bin, harness.Env(t, ws), ws, "stat", "f.txt")
	c.Stdout = slave
	if err := c.Run(); err != nil {
		t.Fatalf("stat on a terminal: %v", err)
	}
	slave.Close()
	var screen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(screen.String(), "}") {
		master.SetReadDeadline(time.Now().Add(harness.Timeout))
		n, err := master.Read(buf)
		screen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	out := strings.ReplaceAll(screen.String(), "\r\n", "\n")
	if !strings.HasPrefix(out, "{\n  \"ok\": true,\n  \"op\": \"stat\",") {
		t.Errorf("on a terminal the result is not indented: %q", out)
	}
}
