//go:build unix

package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// A refusal in the shell explains itself (docs/design.md §10): the
// supervisor reads the output it relays (the session's terminal, and
// exec's standard error where it is a pipe: tty.StderrRelay), and for a
// line where a command says a path was refused ("Read-only file system",
// "Device or resource busy", "Permission denied"), it asks the policy
// what refuses a write there, as `dsh-fs denials PATH` does
// (policyview.ExplainWrite). Only when the policy's layer there is one
// that fails with that error does it log the refusal in the session's
// denial log and, with explain_denials: inline, write one line right
// after it. The line is the policy's words and the path, nothing else of
// what the session printed; it is bounded, once per path and error, and
// at most maxExplainLines a session.

// maxExplainLines bounds the lines a session's output gets added.
const maxExplainLines = 20

// maxShownPath bounds the path an added line names.
const maxShownPath = 160

// explainer answers the refusals read in a session's output.
type explainer struct {
	s      *supervisor
	fence  *sandbox.Fence
	inline bool
	// mu holds one explanation at a time; said and lines are the added
	// lines so far, by path and error.
	mu    sync.Mutex
	said  map[string]bool
	lines int
}

// relayStderr puts the stderr relay (s.stderr) between child and exec's
// standard error when that is a pipe (startExplaining starts it); nothing
// where explain_denials is off, or in a nested session (the outer one
// reads its output). Where the relay cannot be made, the stream is
// passed as it is.
func (s *supervisor) relayStderr(child *exec.Cmd) {
	if s.nested || s.settings.ExplainDenials == config.ExplainOff {
		return
	}
	errs, _ := child.Stderr.(*os.File)
	r, err := tty.OpenStderr(errs)
	if r == nil || err != nil {
		return
	}
	s.stderr = r
	if out, _ := child.Stdout.(*os.File); tty.SameFile(out, errs) {
		child.Stdout = r.Writer() // 2>&1: one pipe keeps the lines' order
	}
	child.Stderr = r.Writer()
}

// startExplaining readies the explainer, when explain_denials asks for
// one, and gives it the session's output: the terminal's relay and the
// relay of exec's standard error (made by relayStderr). It runs once the
// session's record is written.
func (s *supervisor) startExplaining() {
	mode := s.settings.ExplainDenials
	if s.nested || mode == config.ExplainOff {
		return
	}
	x := &explainer{s: s, fence: sandbox.NewFence(s.settings.Policy), inline: mode != config.ExplainLog, said: map[string]bool{}}
	if s.relay != nil {
		s.relay.Scanner.Explain = x.explain
	}
	if s.stderr != nil {
		s.stderr.Scanner.Explain = x.explain
		s.stderr.Start()
	}
}

// endExplaining copies what the session wrote last to exec's standard
// error, and releases the relay. It may be called again.
func (s *supervisor) endExplaining() {
	if s.stderr != nil {
		s.stderr.Close()
	}
}

// explain answers the refusal r: the line to add after it, or nil. A
// relative path is taken from the folder cwd finds, which the entry names
// (Base).
func (x *explainer) explain(r tty.Refusal) []byte {
	// The terminal's relay and the stderr relay may both ask at once;
	// one refusal at a time is explained.
	x.mu.Lock()
	defer x.mu.Unlock()
	path, base := r.Path, ""
	if !filepath.IsAbs(path) {
		var dir string
		dir, base = x.cwd()
		path = filepath.Join(dir, path)
	}
	t, err := x.fence.Resolve(path)
	if err != nil && t.Path == "" {
		return nil
	}
	// The explanation names the path as resolved: the model's shell
	// may be in another folder than the file tool's next call.
	t.Given = t.Path
	s := x.s
	ex := policyview.ExplainWrite(s.settings.Policy, s.rec, x.fence, t)
	if !refusedWith(ex.Layer, r.Errno, t.Path) {
		return nil
	}
	s.denials.Add(denials.Entry{Layer: denials.LayerShell, Op: ex.Op, Path: t.Path, Printed: r.Path, Base: base,
		Error: r.Errno.Error(), Rule: ex.Layer + ": " + ex.Rule, Escalation: ex.Escalation, WayForward: ex.WayForward})
	if !x.inline {
		return nil
	}
	key := t.Path + "\x00" + strconv.Itoa(int(r.Errno))
	if x.said[key] || x.lines >= maxExplainLines {
		return nil
	}
	x.said[key] = true
	x.lines++
	return explainLine(t.Path, ex)
}

// refusedWith says whether the layer that refuses a write at path (a
// policyview layer) is one that fails with errno there: the mount layer
// with "Read-only file system" (and "Device or resource busy" for its
// mount points), Landlock with "Permission denied" or "Operation not
// permitted", where the file's own permissions would let the write
// through (a refusal by those is not the sandbox's).
func refusedWith(layer string, errno unix.Errno, path string) bool {
	switch errno {
	case unix.EROFS, unix.EBUSY:
		return layer == policyview.LayerReadOnlyBind || layer == policyview.LayerReadOnlyTree
	case unix.EACCES:
		return layer == policyview.LayerLandlock && unixWritable(path)
	case unix.EPERM:
		return layer == policyview.LayerLandlock
	}
	return false
}

// unixWritable says whether this process's user may write path, or make
// it in its folder, by the files' own permissions.
func unixWritable(path string) bool {
	err := unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
	if err == unix.ENOENT {
		err = unix.Faccessat(unix.AT_FDCWD, filepath.Dir(path), unix.W_OK|unix.X_OK, unix.AT_EACCESS)
	}
	return err == nil
}

// explainLine is the line added after a refusal of a write at path that
// ex explains: the path (or, when it is long or holds anything but plain
// characters, "a path named above"), the rule in short, and whether an
// escalation helps. It ends in no question and asks nothing.
func explainLine(path string, ex policyview.Explained) []byte {
	shown := path
	if !plainPath(path) {
		shown = "the path named above"
	}
	rule, _, _ := strings.Cut(ex.Rule, ":")
	esc := "no escalation lifts it"
	if ex.Escalation != "no" {
		esc = "the file tool can make one change with --escalate, which the approver decides; the shell stays fenced"
	}
	return fmt.Appendf(nil, "[sandbox: %s is read-only in this session (%s); %s; see dsh-fs denials]", shown, plainWords(rule), esc)
}

// plainPath says path may be shown as it is: short, and only printable
// characters that cannot read as markup or a question.
func plainPath(path string) bool {
	if len(path) > maxShownPath || !utf8.ValidString(path) {
		return false
	}
	for _, r := range path {
		if !plainRune(r) || r == '\'' {
			return false
		}
	}
	return true
}

// plainRune says r may stand in an added line: printable, no bidi
// control, nothing that could read as markup or a question.
func plainRune(r rune) bool {
	return unicode.IsPrint(r) && !unicode.Is(unicode.Bidi_Control, r) && !strings.ContainsRune("[]?\"`\\", r)
}

// plainWords is the policy's words w (a rule, which may name a glob of a
// trusted config), bounded, with what is not a plain character replaced.
func plainWords(w string) string {
	w = strings.Map(func(r rune) rune {
		if !plainRune(r) {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(w, "_"))
	if len(w) > 2*maxShownPath {
		cut := 2 * maxShownPath
		for cut > 0 && !utf8.RuneStart(w[cut]) {
			cut--
		}
		w = w[:cut] + "…"
	}
	return w
}

// cwd is the folder a relative path in the session's output is taken
// from, and which it is: the working folder of the process in the
// foreground of the session's terminal, else of CMD, else the folder the
// session started in.
func (x *explainer) cwd() (dir, base string) {
	s := x.s
	fg := 0
	if s.relay != nil {
		fg = s.relay.Foreground()
	}
	for _, p := range []struct {
		pid   int
		which string
	}{{fg, "in the foreground of the session's terminal"}, {s.commandPid(), "CMD"}} {
		if p.pid <= 0 {
			continue
		}
		if d, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.pid)); err == nil && filepath.IsAbs(d) {
			return d, fmt.Sprintf("%s, the working folder of process %d (%s)", d, p.pid, p.which)
		}
	}
	d := startDir(s.settings.Policy)
	return d, d + ", the folder the session started in (no process's working folder could be read)"
}

// commandPid is CMD's process: the session's first process, or its first
// child where it is the init of the session's PID namespace; the first
// process is the child's first child where the child started it. 0 when
// unknown.
func (s *supervisor) commandPid() int {
	l := s.launched
	if l == nil {
		return 0
	}
	pid := l.firstPid()
	if pid == 0 || !s.rec.Shell.ProcessesHeld {
		return pid
	}
	return firstChild(pid)
}

// firstChild is the first child process of pid, 0 for none: CMD, of the
// session's init; the first process, of the child. A child is listed
// under the thread that forked it, and the child forks from the thread
// it locked, which need not be its main one, so every thread's list is
// read (childrenOf).
func firstChild(pid int) int {
	if c := childrenOf(pid); len(c) > 0 {
		return c[0]
	}
	return 0
}

// childrenOf are the child processes of pid, from every thread's list.
func childrenOf(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var children []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				children = append(children, n)
			}
		}
	}
	return children
}
