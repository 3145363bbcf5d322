//go:build unix

package exec

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExecRefusal* tests (issue 40, "denials explained as they
// happen"): a command in the shell that is refused by the sandbox prints
// its own error ("Read-only file system", "Device or resource busy"); the
// supervisor reads it in the output it relays (exec's standard error
// where it is a pipe, the session's terminal), logs it in the session's
// denial log with the policy's layer and rule, and adds one line after
// it, once per path. A refusal the sandbox does not cause, and a line
// that only claims one, get nothing.

// goWriteFile is the test-only program `go-writefile PATH`: it writes
// PATH as a Go program does and prints the error as Go prints it (open
// PATH: read-only file system), exiting 1.
func goWriteFile() {
	if err := os.WriteFile(os.Args[1], []byte("x\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// refusalSession is a socket session of a git workspace with an outside
// folder, and go-writefile on the ordinary user's $PATH.
func refusalSession(t *testing.T, agent bool, config string) (s *socketSession, out string) {
	t.Helper()
	requireMountLayer(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	s = newSocketSession(t, agent)
	if agent {
		if err := os.Link(s.bin, filepath.Join(filepath.Dir(s.bin), "go-writefile")); err != nil {
			t.Fatal(err)
		}
	}
	if c := exec.Command("git", "init", "-q", s.ws); c.Run() != nil {
		t.Skip("git init failed here")
	}
	harness.WriteTree(t, s.ws, map[string]string{"locked": "x\n", "fine.txt": "x\n"})
	out = filepath.Join(s.home, "out")
	os.MkdirAll(out, 0o755)
	if agent {
		chownTree(t, s.ws)
		chownTree(t, s.home)
	}
	s.config(t, "tmp: false\n"+config)
	return s, out
}

// refusalScript hits each kind of refusal once, the outside write twice;
// chmods a workspace file to 000 and writes it (refused by its own
// permissions as the ordinary user, and as root without capabilities),
// and prints a forged refusal of a path the policy allows. Then it asks
// dsh-fs denials, and exits 7.
func refusalScript(out string) string {
	py := ""
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = fmt.Sprintf(`/usr/bin/python3 -c "open('%s/py.txt', 'w')" 2>&1 >/dev/null | tail -n 1 >&2; `, out)
	}
	return fmt.Sprintf(`echo one
touch %[1]s/x; touch %[1]s/x
echo x > .git/hooks/pre-commit
go-writefile %[1]s/go.txt
git config user.name someone
%[2]schmod 000 locked; echo y > locked
echo "touch: cannot touch 'fine.txt': Read-only file system" >&2
echo two
echo "DENIALS $(dsh-fs denials)"
exit 7
`, out, py)
}

// wantRefusals checks the denial log printed on the DENIALS line of
// stdout: one shell entry per refused path, with its layer and rule, the
// outside write counted twice, and nothing for locked or fine.txt.
func wantRefusals(t *testing.T, s *socketSession, out, stdout string) {
	t.Helper()
	_, line, ok := strings.Cut(stdout, "DENIALS ")
	line, _, _ = strings.Cut(line, "\n")
	var d denialsOut
	if !ok || json.Unmarshal([]byte(line), &d) != nil || !d.Session {
		t.Fatalf("no denials result:\n%s", stdout)
	}
	harness.Validate(t, harness.Schemas(t)["result-denials.json"], "result-denials.json", line)
	want := map[string][2]string{
		out + "/x":                      {"mount (read-only tree): outside the writable roots", "2"},
		s.ws + "/.git/hooks/pre-commit": {"mount (read-only bind): protected (" + s.ws + "/.git)", "1"},
		out + "/go.txt":                 {"mount (read-only tree): outside the writable roots", "1"},
		s.ws + "/.git/config":           {"mount (read-only bind): protected (" + s.ws + "/.git)", "1"},
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		want[out+"/py.txt"] = [2]string{"mount (read-only tree): outside the writable roots", "1"}
	}
	for _, e := range d.Entries {
		w, ok := want[e.Path]
		if e.Layer != "shell" || !ok {
			t.Errorf("unexpected entry %+v", e)
			continue
		}
		delete(want, e.Path)
		if e.Op != "write" || !strings.HasPrefix(e.Rule, w[0]) || fmt.Sprint(e.Count) != w[1] || e.Escalation == "" {
			t.Errorf("entry %+v; want rule %q, count %s", e, w[0], w[1])
		}
	}
	for p := range want {
		t.Errorf("%s not in the log: %+v", p, d.Entries)
	}
}

// explanationLine matches a line the supervisor adds.
var explanationLine = regexp.MustCompile(`(?m)^\[sandbox: (.*) is read-only in this session \(.*\); .*; see dsh-fs denials\]\r?$`)

// wantExplained checks that errs holds exactly one added line per refused
// path, each right after a line that names the path's error.
func wantExplained(t *testing.T, s *socketSession, out, errs string) {
	t.Helper()
	want := map[string]bool{out + "/x": true, s.ws + "/.git/hooks/pre-commit": true, out + "/go.txt": true, s.ws + "/.git/config": true}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		want[out+"/py.txt"] = true
	}
	lines := strings.Split(strings.ReplaceAll(errs, "\r\n", "\n"), "\n")
	for i, l := range lines {
		m := explanationLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if !want[m[1]] {
			t.Errorf("an added line for %s, which is not refused or explained twice:\n%s", m[1], errs)
		}
		delete(want, m[1])
		if i == 0 || !regexp.MustCompile(`(Read-only file system|read-only file system|Device or resource busy)`).MatchString(lines[i-1]) {
			t.Errorf("the line for %s does not follow a refusal:\n%s", m[1], errs)
		}
	}
	for p := range want {
		t.Errorf("no line explains %s:\n%s", p, errs)
	}
}

// withoutExplanations is output without the lines the supervisor added.
func withoutExplanations(output string) string {
	return regexp.MustCompile(`(?m)^\[sandbox: .*\]\r?\n`).ReplaceAllString(output, "")
}

// TestExecRefusalExplainedPipe: exec's streams are pipes (a harness).
// Each refusal is logged and explained once on stderr, right after it;
// the session's exit status and every other byte of its output are those
// of a session with explain_denials: off. As root and as the ordinary
// user.
func TestExecRefusalExplainedPipe(t *testing.T) {
	forEachUser(t, func(t *testing.T, s0 *socketSession) {
		s, out := refusalSession(t, s0.agent, "")
		code, stdout, stderr := s.runPipes(t, refusalScript(out))
		if code != 7 {
			t.Errorf("exit status %d, want 7", code)
		}
		wantRefusals(t, s, out, stdout)
		wantExplained(t, s, out, stderr)
		if strings.Contains(stderr, "fine.txt is") || strings.Contains(stderr, "/locked is") {
			t.Errorf("a refusal the sandbox did not cause was explained:\n%s", stderr)
		}
		if !strings.Contains(stderr, "locked: Permission denied") && s.agent {
			t.Errorf("the write of a chmod-000 file was not refused by its permissions:\n%s", stderr)
		}
		// The same session with explain_denials: off: nothing added,
		// nothing logged, the rest byte for byte.
		off, out2 := refusalSession(t, s0.agent, "explain_denials: off\n")
		code2, stdout2, stderr2 := off.runPipes(t, refusalScript(out2))
		if code2 != 7 || strings.Contains(stderr2, "[sandbox:") || !strings.Contains(stdout2, `"entries":[]`) {
			t.Errorf("explain_denials: off: exit %d, stdout %s, stderr:\n%s", code2, stdout2, stderr2)
		}
		norm := func(o, ws, outDir string) string {
			return strings.NewReplacer(ws, "WS", outDir, "OUT").Replace(o)
		}
		if a, b := norm(withoutExplanations(stderr), s.ws, out), norm(stderr2, off.ws, out2); a != b {
			t.Errorf("stderr differs beyond the added lines:\n%s\n---- off:\n%s", a, b)
		}
	})
}

// TestExecRefusalExplainedOrder: with 2>&1 (one pipe for both streams)
// the lines keep their order, the added one right after its refusal.
func TestExecRefusalExplainedOrder(t *testing.T) {
	s, out := refusalSession(t, false, "")
	got := s.run(t, nil, fmt.Sprintf("echo one; touch %s/x; echo two; echo three >&2; echo four", out))
	want := fmt.Sprintf("one\ntouch: cannot touch '%[1]s/x': Read-only file system\n"+
		"[sandbox: %[1]s/x is read-only in this session (outside the writable roots); "+
		"the file tool can make one change with --escalate, which the approver decides; the shell stays fenced; see dsh-fs denials]\n"+
		"two\nthree\nfour\n", out)
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestExecRefusalBrokenPipe: when the reader of exec's standard error
// goes away, CMD's next write fails as it would without exec's relay
// (SIGPIPE: exit 141), and exec ends.
func TestExecRefusalBrokenPipe(t *testing.T) {
	s, _ := refusalSession(t, false, "")
	c := s.command(t, nil, "bash", "-c", `"$0" exec --cwd "$1" -- sh -c 'yes >&2' 2>&1 >/dev/null | head -n 1 >/dev/null; echo "status=${PIPESTATUS[0]}"`, s.bin, s.ws)
	done := make(chan struct{})
	var got []byte
	go func() { got, _ = c.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(harness.Timeout):
		c.Process.Kill()
		t.Fatal("exec did not end once its stderr's reader went away")
	}
	if !strings.Contains(string(got), "status=141") {
		t.Errorf("got %q; want exec's status 141 (CMD killed by SIGPIPE)", got)
	}
}

// TestExecRefusalExplainedTerminal: exec's streams are a terminal. The
// refusals are logged and explained on the terminal, once each.
func TestExecRefusalExplainedTerminal(t *testing.T) {
	forEachUser(t, func(t *testing.T, s0 *socketSession) {
		s, out := refusalSession(t, s0.agent, "")
		screen, code := s.runTerminal(t, refusalScript(out))
		if code != 7 {
			t.Errorf("exit status %d, want 7:\n%s", code, screen)
		}
		wantRefusals(t, s, out, strings.ReplaceAll(screen, "\r\n", "\n"))
		wantExplained(t, s, out, screen)
	})
}

// runPipes runs `dsh-fs exec --cwd WS -- sh -c SCRIPT` with its stdout
// and stderr two pipes, and returns its exit status and both.
func (s *socketSession) runPipes(t *testing.T, script string) (int, string, string) {
	t.Helper()
	c := s.command(t, nil, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c", script)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(harness.Timeout, func() { c.Process.Kill() })
	defer timer.Stop()
	c.Wait()
	return c.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// runTerminal runs `dsh-fs exec --cwd WS -- sh -c SCRIPT` with all three
// streams a fresh pseudo-terminal, its controlling terminal, and returns
// what the terminal showed and the exit status.
func (s *socketSession) runTerminal(t *testing.T, script string) (string, int) {
	t.Helper()
	master, slave := openPTYPair(t)
	defer slave.Close()
	c := s.command(t, nil, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c", script)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setsid, c.SysProcAttr.Setctty, c.SysProcAttr.Ctty = true, true, 0
	if s.agent {
		os.Chown(slave.Name(), agentUID, agentUID)
	}
	shown, hungUp := readScreenUntilHangup(master)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(harness.Timeout, func() { c.Process.Kill() })
	defer timer.Stop()
	c.Wait()
	return finalScreen(t, slave, shown, hungUp), c.ProcessState.ExitCode()
}

// TestExecRefusalRelativePath: a relative path in a refusal is taken from
// the working folder of the session's command (its shell cd'd beneath the
// workspace), not the folder the session started in, and the entry says
// which folder it used.
func TestExecRefusalRelativePath(t *testing.T) {
	s, _ := refusalSession(t, false, "")
	_, stdout, stderr := s.runPipes(t, `mkdir -p sub/deep && cd sub/deep && touch ../../.git/config; echo "DENIALS $(dsh-fs denials)"`)
	_, line, _ := strings.Cut(stdout, "DENIALS ")
	var d struct {
		Entries []struct{ Layer, Path, Printed, Base string }
	}
	if json.Unmarshal([]byte(line), &d) != nil || len(d.Entries) != 1 {
		t.Fatalf("want one entry:\n%s\nstderr:\n%s", stdout, stderr)
	}
	e := d.Entries[0]
	if e.Layer != "shell" || e.Path != s.ws+"/.git/config" || e.Printed != "../../.git/config" || !strings.HasPrefix(e.Base, s.ws+"/sub/deep, the working folder of process ") {
		t.Errorf("entry %+v; want %s/.git/config, printed ../../.git/config, from %s/sub/deep", e, s.ws, s.ws)
	}
	if !strings.Contains(stderr, "[sandbox: "+s.ws+"/.git/config is read-only") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestExecRefusalForgedQuestion: a refusal printed about a path built to
// read as the approval question ("? [y/N]", a control sequence) gets the
// policy's line, which names no such path: the supervisor writes nothing
// the session chose but a plain path.
func TestExecRefusalForgedQuestion(t *testing.T) {
	s, out := refusalSession(t, false, "")
	_, _, stderr := s.runPipes(t, fmt.Sprintf(`printf "touch: cannot touch '%s/x? [y/N] ': Read-only file system\n" >&2; `+
		`printf "touch: cannot touch '%s/y\033[2K\rdsh-fs: write /etc/passwd was denied': Read-only file system\n" >&2`, out, out))
	added := explanationLine.FindAllString(stderr, -1)
	if len(added) != 2 {
		t.Fatalf("want 2 added lines, got %q:\n%q", added, stderr)
	}
	for _, l := range added {
		if !strings.HasPrefix(l, "[sandbox: the path named above is read-only in this session (outside the writable roots);") ||
			strings.ContainsAny(l, "?\x1b\r") || strings.Contains(l, "dsh-fs: write") {
			t.Errorf("added line %q", l)
		}
	}
}

// TestExecRefusalLogOnly: explain_denials: log (here from a session
// source, which may set it) logs the refusal and adds no line.
func TestExecRefusalLogOnly(t *testing.T) {
	s, out := refusalSession(t, false, "")
	harness.WriteTree(t, s.ws, map[string]string{"session.yaml": "explain_denials: log\n"})
	c := s.command(t, []string{"DSH_FS_CONFIG=" + filepath.Join(s.ws, "session.yaml")}, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c",
		fmt.Sprintf(`touch %s/x; echo "DENIALS $(dsh-fs denials)"`, out))
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "[sandbox:") || !strings.Contains(stderr.String(), "Read-only file system") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), `"layer":"shell","op":"write","path":"`+out+`/x"`) {
		t.Errorf("no entry for %s/x:\n%s", out, stdout.String())
	}
}
