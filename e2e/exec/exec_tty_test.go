//go:build unix

package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// The terminal belongs to the person (issue 21): the tests here run a
// "person's shell" on a real pseudo-terminal, start dsh-fs exec from it,
// and let the session attack that terminal: push input with TIOCSTI into
// the supervisor's question or into the person's shell, or leave a process
// behind that takes the terminal and reads the next line typed.

// tiocstiPush is a test-only attacker: it pushes TEXT into the input of
// its controlling terminal with TIOCSTI, as if typed, COUNT times, every
// 200 ms, after DELAY seconds. It says on stderr what the kernel answered
// and exits 1 when a push was refused.
//
//	tiocsti-push DELAY COUNT TEXT
func tiocstiPush() {
	args := os.Args[1:]
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tiocsti-push DELAY COUNT TEXT")
		os.Exit(100)
	}
	delay, err1 := strconv.ParseFloat(args[0], 64)
	count, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "tiocsti-push: bad DELAY or COUNT")
		os.Exit(100)
	}
	text := strings.ReplaceAll(args[2], `\n`, "\n")
	time.Sleep(time.Duration(delay * float64(time.Second)))
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiocsti-push: /dev/tty:", err)
		os.Exit(1)
	}
	for i := 0; i < count; i++ {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		for j := 0; j < len(text); j++ {
			b := text[j]
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, tty.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
				fmt.Fprintln(os.Stderr, "tiocsti-push: TIOCSTI:", e)
				os.Exit(1)
			}
		}
	}
	fmt.Fprintln(os.Stderr, "tiocsti-push: pushed")
}

// ttyThief is a test-only attacker left behind by a session: after DELAY
// seconds it writes DIR/awake, stops the terminal's foreground process
// group (the person's shell) and takes the foreground of its controlling
// terminal (ignoring SIGTTOU, as a background process may), reads the
// next line typed there, writes it to DIR/stolen and gives the terminal
// back, waking the process group it took it from. No TIOCSTI is needed.
//
//	tty-thief DELAY DIR
func ttyThief() {
	args := os.Args[1:]
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tty-thief DELAY DIR")
		os.Exit(100)
	}
	delay, err := strconv.ParseFloat(args[0], 64)
	if err != nil {
		os.Exit(100)
	}
	signal.Ignore(syscall.SIGHUP, syscall.SIGTTOU, syscall.SIGTTIN)
	time.Sleep(time.Duration(delay * float64(time.Second)))
	os.WriteFile(filepath.Join(args[1], "awake"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tty-thief: /dev/tty:", err)
		os.Exit(1)
	}
	fd := int(tty.Fd())
	unix.Setpgid(0, 0)
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err == nil {
		// A shell already waiting in read would get the line: stop it.
		unix.Kill(-fg, syscall.SIGSTOP)
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tty-thief: take the foreground:", err)
		os.Exit(1)
	}
	var line []byte
	b := make([]byte, 1)
	for len(line) < 256 {
		n, err := tty.Read(b)
		if err != nil || n == 0 {
			break
		}
		if b[0] == '\n' || b[0] == '\r' {
			break
		}
		line = append(line, b[0])
	}
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, fg)
	unix.Kill(-fg, syscall.SIGCONT)
	os.WriteFile(filepath.Join(args[1], "stolen"), append(line, '\n'), 0o644)
}

// requireLegacyTIOCSTI skips a test of TIOCSTI where the kernel refuses
// it to everyone anyway (dev.tty.legacy_tiocsti = 0): there is nothing
// for dsh-fs to hold then.
func requireLegacyTIOCSTI(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("dev.tty.legacy_tiocsti is 0: this kernel refuses TIOCSTI to everyone")
	}
}

// personTerm is a person at a terminal: an interactive shell, the leader
// of a new session whose controlling terminal is a fresh pseudo-terminal,
// and the master side, on which the test types and reads the screen.
type personTerm struct {
	t      *testing.T
	master *os.File
	path   string // the person's terminal, /dev/pts/N
	shown  func() string
	cmd    *exec.Cmd
	done   chan error
}

// startPerson starts the person's shell, sh, interactive, in ws with env;
// as is run on c before it starts (asAgent, or nothing).
func startPerson(t *testing.T, env []string, ws string, as func(*exec.Cmd)) *personTerm {
	t.Helper()
	master, slave := openPTYPair(t)
	defer slave.Close()
	if as != nil {
		// The terminal belongs to the person, as a login makes it.
		uid := agentUser(t)
		os.Chown(slave.Name(), uid, uid)
	}
	c := exec.Command("sh", "-i")
	c.Env, c.Dir = append(slices.Clone(env), "PS1=$ ", "TERM=dumb"), ws
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	if as != nil {
		as(c)
	}
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setsid, c.SysProcAttr.Setctty, c.SysProcAttr.Ctty = true, true, 0
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p := &personTerm{t: t, master: master, path: slave.Name(), shown: readScreen(master), cmd: c, done: make(chan error, 1)}
	go func() { p.done <- c.Wait() }()
	t.Cleanup(func() {
		c.Process.Kill()
		<-p.done
	})
	p.waitFor("$ ")
	return p
}

// typeLine types line and a newline at the terminal.
func (p *personTerm) typeLine(line string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(line + "\n")); err != nil {
		p.t.Fatalf("type %q: %v", line, err)
	}
}

// waitFor waits until the terminal has shown s, or any of also, and
// fails the test when it does not within harness.Timeout.
func (p *personTerm) waitFor(s string, also ...string) {
	p.t.Helper()
	deadline := time.Now().Add(harness.Timeout)
	for time.Now().Before(deadline) {
		screen := p.shown()
		if strings.Contains(screen, s) || slices.ContainsFunc(also, func(a string) bool { return strings.Contains(screen, a) }) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("the terminal never showed %q; it shows:\n%s", s, p.shown())
}

// waitForFileLine waits until the file at path holds a whole line, as a
// helper of the session writes at its end, and fails the test when it
// does not within harness.Timeout.
func (p *personTerm) waitForFileLine(path string) {
	p.t.Helper()
	for deadline := time.Now().Add(harness.Timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(path); bytes.HasSuffix(b, []byte("\n")) {
			return
		}
	}
	b, _ := os.ReadFile(path)
	p.t.Fatalf("%s holds no whole line after %v: %q; the terminal shows:\n%s", path, harness.Timeout, b, p.shown())
}

// marker is typed after a command so the test knows the person's shell
// has run it: the screen shows "done-N" only once the shell computed it,
// never in the echo of what was typed.
func (p *personTerm) marker(n int) {
	p.t.Helper()
	p.typeLine(fmt.Sprintf("echo done-$((%d+1))", n))
	p.waitFor(fmt.Sprintf("done-%d", n+1))
}

// people are the people the terminal tests run as: root, and a real
// ordinary user (whose session is in a user namespace). setup gives the
// workspace to that person and returns the environment's additions.
var people = []struct {
	name  string
	as    func(t *testing.T) func(*exec.Cmd)
	setup func(t *testing.T, dirs ...string) []string
}{
	{"root", func(*testing.T) func(*exec.Cmd) { return nil }, func(*testing.T, ...string) []string { return nil }},
	{"user", func(t *testing.T) func(*exec.Cmd) {
		agentUser(t)
		return func(c *exec.Cmd) { asAgent(t, c) }
	}, func(t *testing.T, dirs ...string) []string {
		for _, d := range dirs {
			chownTree(t, d)
		}
		// The test binary's commands are in a private folder of
		// testscript's: the user must reach them.
		for d := filepath.Dir(harness.Bin(t)); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o011 != 0o011 {
				os.Chmod(d, fi.Mode().Perm()|0o011)
			}
		}
		return []string{"XDG_RUNTIME_DIR=" + agentRuntimeDir(t)}
	}},
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// execLine is the command line that starts a session of ws alone around
// sh -c script, and says "exited-N" when the session ended with status N.
// What the person types while the session runs is the session's, so the
// test waits for that before typing to the person's shell.
func execLine(ws, script string) string {
	return "dsh-fs exec --cwd " + shellQuote(ws) + " --tmp=false -- sh -c " + shellQuote(script) + `; echo "exited-$?"`
}

// TestExecTIOCSTIIntoQuestion: while a brokered write waits at the
// supervisor's [y/N], a process of the session pushes "y\n" into the
// terminal with TIOCSTI, again and again. The push must not answer the
// question: the write does not land, and the person's own "n" refuses it.
func TestExecTIOCSTIIntoQuestion(t *testing.T) {
	harness.RequireLandlock(t)
	requireLegacyTIOCSTI(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) { testTIOCSTIIntoQuestion(t, who.as(t), who.setup) })
	}
}

func testTIOCSTIIntoQuestion(t *testing.T, as func(*exec.Cmd), setup func(*testing.T, ...string) []string) {
	ws, out := t.TempDir(), t.TempDir()
	env := append(execEnv(t, ws, "OUT="+out), setup(t, ws, out)...)
	p := startPerson(t, env, ws, as)
	target := filepath.Join(out, "x")
	p.typeLine(execLine(ws, `tiocsti-push 0.3 10 'y\n' 2>"$PWD/pusher.err" &
dsh-fs write "$OUT/x" --content pwned --escalate danger-full-access >"$PWD/write.out"; echo "rc=$?"; wait`))
	p.waitFor("[y/N]", "rc=3")
	if b, _ := os.ReadFile(filepath.Join(ws, "write.out")); strings.Contains(string(b), "session record not trusted") {
		t.Skipf("the file tool refuses this session's record, so nothing asks (the record part of issue 21): %s", b)
	}
	p.waitFor("[y/N]")
	// The person answers once the pusher is done: refused at its first
	// push, or after all ten (2 s of them), when it says so on its one
	// line, however slow the machine.
	p.waitForFileLine(filepath.Join(ws, "pusher.err"))
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("TIOCSTI answered the question: %s was written; the terminal shows:\n%s", target, p.shown())
	}
	p.typeLine("n")
	p.waitFor("exited-0")
	p.marker(41)
	wantAbsent(t, target)
	if b, _ := os.ReadFile(filepath.Join(ws, "pusher.err")); !strings.Contains(string(b), "operation not permitted") {
		t.Errorf("the session's TIOCSTI was not refused (seccomp layer); the pusher said %q", b)
	}
}

// TestExecTIOCSTIIntoOuterShell: the session pushes a command line into
// the terminal and exits at once; the person's shell, reading the
// terminal next, must not run it.
func TestExecTIOCSTIIntoOuterShell(t *testing.T) {
	harness.RequireLandlock(t)
	requireLegacyTIOCSTI(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) { testTIOCSTIIntoOuterShell(t, who.as(t), who.setup) })
	}
}

func testTIOCSTIIntoOuterShell(t *testing.T, as func(*exec.Cmd), setup func(*testing.T, ...string) []string) {
	ws, out := t.TempDir(), t.TempDir()
	env := append(execEnv(t, ws, "OUT="+out), setup(t, ws, out)...)
	p := startPerson(t, env, ws, as)
	pwned := filepath.Join(out, "PWNED")
	p.typeLine(execLine(ws, `tiocsti-push 0 1 'touch "$OUT/PWNED"\n' 2>"$PWD/pusher.err"; echo pushed-$?`))
	p.waitFor("exited-0")
	p.marker(41)
	time.Sleep(200 * time.Millisecond)
	p.marker(51)
	wantAbsent(t, pwned)
}

// TestExecLeftoverTakesTerminal: a process the session leaves behind
// wakes after the session ended, takes the terminal from the person's
// shell and reads the next line typed (a password). It must neither get
// the line nor be alive to try.
func TestExecLeftoverTakesTerminal(t *testing.T) {
	harness.RequireLandlock(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) { testLeftoverTakesTerminal(t, who.as(t), who.setup) })
	}
}

func testLeftoverTakesTerminal(t *testing.T, as func(*exec.Cmd), setup func(*testing.T, ...string) []string) {
	ws := t.TempDir()
	env := append(execEnv(t, ws), setup(t, ws)...)
	p := startPerson(t, env, ws, as)
	p.typeLine(execLine(ws, `tty-thief 1 "$PWD" 2>"$PWD/thief.err" & exit 0`))
	p.waitFor("exited-0")
	p.marker(41)
	time.Sleep(1500 * time.Millisecond)
	p.typeLine("secret-password")
	time.Sleep(500 * time.Millisecond)
	p.marker(51)
	if b, err := os.ReadFile(filepath.Join(ws, "stolen")); err == nil {
		t.Errorf("a process left behind by the session read the person's next line: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "awake")); err == nil {
		e, _ := os.ReadFile(filepath.Join(ws, "thief.err"))
		t.Errorf("a process of the session outlived it (pid %s inside; it said %q)", strings.TrimSpace(string(b)), e)
	}
}

// TestExecResize: the session's terminal has the person's window size
// at the start, and follows when the person's terminal is resized (the
// kernel's SIGWINCH reaches CMD through the session's terminal).
func TestExecResize(t *testing.T) {
	harness.RequireLandlock(t)
	ws := t.TempDir()
	p := startPerson(t, execEnv(t, ws), ws, nil)
	setSize := func(rows, cols uint16) {
		t.Helper()
		if err := unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
			t.Fatalf("resize: %v", err)
		}
	}
	setSize(30, 100)
	p.typeLine(execLine(ws, `echo "size-$(stty size | tr ' ' x)"; trap 'echo "resized-$(stty size | tr " " x)"; exit 0' WINCH; echo ready-$((1+1)); while :; do sleep 0.05; done`))
	p.waitFor("size-30x100")
	p.waitFor("ready-2")
	setSize(40, 120)
	p.waitFor("resized-40x120")
	p.waitFor("exited-0")
}

// TestExecProcessesLayer: the session is a PID namespace of its own, with
// its own /proc: CMD is one of its first pids, under the session's init,
// and /proc lists the session's processes only. policy says so inside, and outside says
// what exec would do here.
func TestExecProcessesLayer(t *testing.T) {
	harness.RequireLandlock(t)
	ws := t.TempDir()
	code, out, errs := execSh(t, execEnv(t, ws), ws, fenced(ws), `echo "pid=$$"; ls -d /proc/[0-9]* | wc -l; dsh-fs policy --verbose`)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	lines := strings.SplitN(out, "\n", 3)
	// The init's threads take the first few pids of the namespace.
	if pid, err := strconv.Atoi(strings.TrimPrefix(lines[0], "pid=")); len(lines) < 3 || err != nil || pid > 64 {
		t.Fatalf("CMD is not one of the first pids of its own PID namespace: %q", out)
	}
	// init, sh, ls (and wc) at most.
	if n, _ := strconv.Atoi(strings.TrimSpace(lines[1])); n < 2 || n > 5 {
		t.Errorf("/proc lists %d processes; want the session's few", n)
	}
	var inside struct {
		Shell struct {
			TerminalHeld  bool   `json:"terminal_held"`
			Terminal      string `json:"terminal"`
			ProcessesHeld bool   `json:"processes_held"`
			Processes     string `json:"processes"`
		} `json:"shell"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &inside); err != nil {
		t.Fatalf("policy inside: %v: %s", err, lines[2])
	}
	if !inside.Shell.TerminalHeld || !strings.Contains(inside.Shell.Terminal, "no terminal among exec's streams") || !strings.Contains(inside.Shell.Terminal, "TIOCSTI") {
		t.Errorf("policy inside, terminal: %v %q", inside.Shell.TerminalHeld, inside.Shell.Terminal)
	}
	if !inside.Shell.ProcessesHeld || !strings.Contains(inside.Shell.Processes, "PID namespace") {
		t.Errorf("policy inside, processes: %v %q", inside.Shell.ProcessesHeld, inside.Shell.Processes)
	}

	_, _, outside, _ := harness.Run(t, harness.Cmd(harness.Bin(t), harness.Env(t, ws), ws, "policy", "--verbose"), nil)
	inside.Shell.TerminalHeld, inside.Shell.ProcessesHeld = true, true
	if err := json.Unmarshal([]byte(outside), &inside); err != nil {
		t.Fatalf("policy outside: %v: %s", err, outside)
	}
	if inside.Shell.TerminalHeld || !strings.Contains(inside.Shell.Terminal, "would give the session a pseudo-terminal") {
		t.Errorf("policy outside, terminal: %v %q", inside.Shell.TerminalHeld, inside.Shell.Terminal)
	}
	if inside.Shell.ProcessesHeld || !strings.Contains(inside.Shell.Processes, "would give it a PID namespace") {
		t.Errorf("policy outside, processes: %v %q", inside.Shell.ProcessesHeld, inside.Shell.Processes)
	}
}

// TestExecPersonTerminalByPath: the session cannot open the person's
// terminal by its name either (a process of the person's uid may open
// /dev/pts/N, and root any): to write an imitation of the supervisor's
// question there, or to read what the person types. The session's
// /dev/pts holds only the terminals the session makes: no entry there
// is the person's terminal (its device and inode), whatever the names
// (the session's own first terminal is /dev/pts/0 of its devpts, which
// may be the person's terminal's name too).
func TestExecPersonTerminalByPath(t *testing.T) {
	harness.RequireLandlock(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) {
			as := who.as(t)
			ws := t.TempDir()
			env := append(execEnv(t, ws), who.setup(t, ws)...)
			p := startPerson(t, env, ws, as)
			var person unix.Stat_t
			if err := unix.Stat(p.path, &person); err != nil {
				t.Fatal(err)
			}
			p.typeLine(execLine(ws, `for f in /dev/pts/*; do stat -c '%n %d:%i' "$f"; done >"$PWD/pts"; script -qec 'echo inner-$((2+2))' /dev/null`))
			p.waitFor("exited-0")
			p.marker(41)
			pts, _ := os.ReadFile(filepath.Join(ws, "pts"))
			if len(pts) == 0 {
				t.Fatalf("the session listed no /dev/pts entry:\n%s", p.shown())
			}
			id := fmt.Sprintf(" %d:%d", person.Dev, person.Ino)
			for _, line := range strings.Split(strings.TrimSpace(string(pts)), "\n") {
				if strings.HasSuffix(line, id) {
					t.Errorf("the session's /dev/pts has the person's terminal %s: %s", p.path, line)
				}
			}
			if _, err := exec.LookPath("script"); err == nil && !strings.Contains(p.shown(), "inner-4") {
				t.Errorf("a terminal made inside the session (script) does not work:\n%s", p.shown())
			}
		})
	}
}

// TestExecTerminalName: the session's terminal has a name inside the
// session, as a terminal has outside: tty(1) prints it and opening it by
// that name reaches the same terminal (GPG_TTY=$(tty), ssh's and sudo's
// prompts), while the person's terminals stay out of the session's
// devpts. Before: "not a tty" inside, since the session's pseudo-terminal
// came from the person's devpts, which the session's own hides.
func TestExecTerminalName(t *testing.T) {
	harness.RequireLandlock(t)
	for _, who := range people {
		t.Run(who.name, func(t *testing.T) {
			ws := t.TempDir()
			env := append(execEnv(t, ws), who.setup(t, ws)...)
			p := startPerson(t, env, ws, who.as(t))
			p.typeLine(execLine(ws, `n=$(tty) && echo "name=$n"; echo "byname-$((1+1))" > "$n"; ls /dev/pts | tr '\n' ' ' | sed 's/^/pts: /'; echo`))
			p.waitFor("exited-0", "exited-1", "exited-2", "exited-127")
			screen := p.shown()
			for _, want := range []string{"name=/dev/pts/0", "byname-2", "pts: 0 ptmx", "exited-0"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the screen lacks %q:\n%s", want, screen)
				}
			}
			if strings.Contains(screen, "not a tty") {
				t.Errorf("tty says not a tty inside:\n%s", screen)
			}
		})
	}
}
