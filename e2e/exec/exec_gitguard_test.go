//go:build unix

package exec

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExecGitGuard* tests (issue 37, "the git guard sees what git
// will see"; issue 38, nothing not_checked for size): a session hides a
// planted repository from the guard behind a symlink to a copy in /tmp,
// an unreadable folder, or a walk budget spent on other files; after
// the session the person's real git, run where the person works, runs
// nothing planted. Each test runs as root and as a real ordinary user.

// guardSession is one session of the git guard's tests: its workspace
// (made by prep before the session, as the person had it), the marker
// the planted code would touch, and how the person runs git afterwards.
type guardSession struct {
	ws, mark string
	// git runs the person's git in dir after the session.
	git func(dir string, args ...string) (int, string)
	// out and errs are exec's stdout and stderr.
	out, errs string
}

// guardSessionBound is the hang guard of a guard session: the session,
// then the guard's walk of every writable root, /tmp too unless noTmp,
// whose size is what every other test left there; and some sessions
// copy a repository or make 20,001 files first. A loaded 2-core machine
// under -race took up to 4.4 s, a fifth of one process's guard.
const guardSessionBound = 3 * harness.Timeout

// runGuardSession makes a workspace, lets prep fill it, and runs script
// in a session of it, as root or (agent) as the ordinary user of
// agentUser, with /tmp a writable root unless noTmp. MARK is the marker
// path in the session's environment. For the user, the workspace is
// given to the user after prep, and then owners (when not nil) sets
// what must belong to someone else.
func runGuardSession(t *testing.T, agent, noTmp bool, prep, owners func(ws string), script string, extra ...string) guardSession {
	t.Helper()
	harness.RequireLandlock(t)
	requireGit(t)
	var g guardSession
	flags := func(ws string) []string {
		if noTmp {
			return fenced(ws)
		}
		return []string{"--cwd", ws}
	}
	if !agent {
		ws, marks := harness.CanonicalTemp(t), t.TempDir()
		g.ws, g.mark = ws, filepath.Join(marks, "PWNED")
		prep(ws)
		env := append(append(execEnv(t, ws, "MARK="+g.mark), gitEnv...), extra...)
		code, out, errs := execShWithin(t, env, ws, flags(ws), script, guardSessionBound)
		if code != 0 || !strings.Contains(out, "planted") {
			t.Fatalf("the session did not plant: exit %d\n%s\n%s", code, out, errs)
		}
		g.out, g.errs = out, errs
		g.git = func(dir string, args ...string) (int, string) { return personGit(t, dir, args...) }
		return g
	}
	uid := agentUser(t)
	bin, dir := harness.UnprivilegedBin(t)
	ws, marks, home, system := filepath.Join(dir, "ws"), filepath.Join(dir, "marks"), filepath.Join(dir, "home"), filepath.Join(dir, "etc")
	for _, d := range []string{ws, marks, home, system} {
		os.MkdirAll(d, 0o755)
	}
	g.ws, g.mark = ws, filepath.Join(marks, "PWNED")
	prep(ws)
	chownTree(t, ws)
	if owners != nil {
		owners(ws)
	}
	os.Chown(marks, uid, uid)
	os.Chown(home, uid, uid)
	env := append(append(agentExecEnv(t, bin, system, "HOME="+home, "DSH_FS_TEST_HOME="+home, "MARK="+g.mark), gitEnv...), extra...)
	c := exec.Command(bin, append(append([]string{"exec"}, flags(ws)...), "--", "sh", "-c", script)...)
	c.Dir, c.Env = ws, env
	asAgent(t, c)
	code, _, out, errs := harness.RunWithin(t, c, nil, guardSessionBound)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("the session did not plant: exit %d\n%s\n%s", code, out, errs)
	}
	g.out, g.errs = out, errs
	g.git = func(dir string, args ...string) (int, string) {
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = env
		asAgent(t, c)
		msg, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(msg)
		}
		return 0, string(msg)
	}
	return g
}

// wantNothingUnchecked fails if the guard's report names a folder as
// not checked.
func wantNothingUnchecked(t *testing.T, errs string) {
	t.Helper()
	if r, ok := guardReport(t, errs); ok && len(r.GitGuard.NotChecked) > 0 {
		t.Errorf("the guard left folders unchecked: %q", r.GitGuard.NotChecked)
	}
}

// symlinkedCopyAttack copies the workspace, a repository, into a folder
// of /tmp ($COPY), plants core.fsmonitor in the copy's config, and
// replaces the person's folder docs with a symlink to the copy's docs:
// the person's git status in docs finds the copy's .git.
const symlinkedCopyAttack = `mkdir -p "$COPY" && cp -a . "$COPY/ws" && ` +
	`git -C "$COPY/ws" config core.fsmonitor "touch $MARK" && ` +
	`rm -rf docs && ln -s "$COPY/ws/docs" docs && echo planted`

// TestExecGitGuardSymlinkedCopy: the symlink-to-a-copy plant of issue
// 37. Before the fix the guard reported nothing (it walked neither
// symlinks nor /tmp) and the person's git status in docs ran the
// planted command.
func TestExecGitGuardSymlinkedCopy(t *testing.T) { testGitGuardSymlinkedCopy(t, false) }

// TestExecGitGuardSymlinkedCopyAgent is TestExecGitGuardSymlinkedCopy as
// the ordinary user dshfs-agent.
func TestExecGitGuardSymlinkedCopyAgent(t *testing.T) { testGitGuardSymlinkedCopy(t, true) }

func testGitGuardSymlinkedCopy(t *testing.T, agent bool) {
	var rnd [6]byte
	rand.Read(rnd[:])
	copyDir := filepath.Join("/tmp", "dshfs-gitguard-"+hex.EncodeToString(rnd[:]))
	t.Cleanup(func() { os.RemoveAll(copyDir) })
	g := runGuardSession(t, agent, false, func(ws string) {
		harness.WriteTree(t, ws, map[string]string{"docs/guide.md": "read me\n"})
		gitRepo(t, ws)
	}, nil, symlinkedCopyAttack, "COPY="+copyDir)
	if fi, err := os.Lstat(filepath.Join(g.ws, "docs")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("docs is not the symlink the session made: %v %v", fi, err)
	}
	g.git(filepath.Join(g.ws, "docs"), "status")
	g.git(g.ws, "status")
	wantAbsent(t, g.mark)
	wantNeutralized(t, g.errs, filepath.Join(copyDir, "ws/.git"), "config: core.fsmonitor")
	wantNothingUnchecked(t, g.errs)
	wantNoQuarantine(t, filepath.Join(g.ws, ".git"))
}

// unreadableParentAttack plants a repository with core.fsmonitor and
// makes its parent folder unreadable but searchable (0311): the
// person, the same user, can still cd through it and run git there.
const unreadableParentAttack = `mkdir -p hide/in && git init -q hide/in && ` +
	`git -C hide/in config core.fsmonitor "touch $MARK" && chmod 0311 hide && echo planted`

// TestExecGitGuardUnreadableParent: the chmod 0311 plant of issue 37, as
// root, which reads every folder.
func TestExecGitGuardUnreadableParent(t *testing.T) { testGitGuardUnreadableParent(t, false) }

// TestExecGitGuardUnreadableParentAgent: the chmod 0311 plant as the
// ordinary user dshfs-agent. Before the fix the user's guard read hide
// as empty, named nothing unchecked, and the person's git status in
// hide/in ran the planted command.
func TestExecGitGuardUnreadableParentAgent(t *testing.T) { testGitGuardUnreadableParent(t, true) }

func testGitGuardUnreadableParent(t *testing.T, agent bool) {
	g := runGuardSession(t, agent, true, func(ws string) { gitRepo(t, ws) }, nil, unreadableParentAttack)
	t.Cleanup(func() { os.Chmod(filepath.Join(g.ws, "hide"), 0o755) })
	g.git(filepath.Join(g.ws, "hide/in"), "status")
	wantAbsent(t, g.mark)
	os.Chmod(filepath.Join(g.ws, "hide"), 0o755)
	wantNeutralized(t, g.errs, filepath.Join(g.ws, "hide/in/.git"), "config: core.fsmonitor")
	wantNothingUnchecked(t, g.errs)
	if agent {
		r, _ := guardReport(t, g.errs)
		if !strings.Contains(strings.Join(r.GitGuard.Restored, " "), filepath.Join(g.ws, "hide")) {
			t.Errorf("the report does not say the guard restored hide's rights: %s", g.errs)
		}
	}
}

// budgetFiles is more files than the old walk's budget (20,000).
const budgetFiles = 20001

// TestExecGitGuardPastBudget: 20,001 files lie before a planted
// repository (aaa sorts first). Before the fix the guard's walks stopped
// at their budget, reported the workspace as not_checked and never saw
// the planted core.fsmonitor.
func TestExecGitGuardPastBudget(t *testing.T) { testGitGuardPastBudget(t, false) }

// TestExecGitGuardPastBudgetAgent is TestExecGitGuardPastBudget as the
// ordinary user dshfs-agent.
func TestExecGitGuardPastBudgetAgent(t *testing.T) { testGitGuardPastBudget(t, true) }

func testGitGuardPastBudget(t *testing.T, agent bool) {
	g := runGuardSession(t, agent, true, func(ws string) {
		many := filepath.Join(ws, "aaa")
		if err := os.MkdirAll(many, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < budgetFiles; i++ {
			if err := os.WriteFile(filepath.Join(many, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}, nil, `git init -q zzz && git -C zzz config core.fsmonitor "touch $MARK" && echo planted`)
	g.git(filepath.Join(g.ws, "zzz"), "status")
	wantAbsent(t, g.mark)
	wantNeutralized(t, g.errs, filepath.Join(g.ws, "zzz/.git"), "config: core.fsmonitor")
	wantNothingUnchecked(t, g.errs)
}

// TestExecGitGuardOthersFolderAgent: in the ordinary user's workspace a
// folder of root's, locked, can be entered but not read (0711), and
// holds a folder open to all, pub. The mount layer, which cannot know
// what such a folder holds, hides it behind an empty read-only tmpfs
// (the tree index's unreadable folder), so the session cannot plant a
// repository in pub; the guard does not go into a folder the session
// could not reach, so the person's folder stays where it was, and the
// person's git there runs nothing. Before the tree index, the plant
// succeeded; before the guard's rework it was then not even named.
func TestExecGitGuardOthersFolderAgent(t *testing.T) {
	requireUserNamespaces(t)
	bin, ws, system := unprivilegedSession(t, nil)
	mark := filepath.Join(t.TempDir(), "MARK")
	gitRepo(t, ws)
	os.MkdirAll(filepath.Join(ws, "locked/pub"), 0o777)
	chownTree(t, ws)
	os.Chown(filepath.Join(ws, "locked"), 0, 0)
	os.Chmod(filepath.Join(ws, "locked"), 0o711)
	os.Chmod(filepath.Join(ws, "locked/pub"), 0o777)
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c",
		`git init -q locked/pub/r 2>&1 && git -C locked/pub/r config core.fsmonitor "touch $MARK" && echo planted; echo "init=$?"`)
	c.Dir = ws
	c.Env = append(agentExecEnv(t, bin, system, "MARK="+mark), "HOME="+ws, "GIT_CONFIG_NOSYSTEM=1")
	asAgent(t, c)
	out, _ := c.CombinedOutput()
	if strings.Contains(string(out), "planted") {
		t.Fatalf("the session planted a repository in a folder the supervisor could not read:\n%s", out)
	}
	if !strings.Contains(string(out), "Read-only file system") {
		t.Errorf("want git's refusal on the hidden folder (Read-only file system):\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(ws, "locked")); err != nil {
		t.Errorf("the person's folder locked is gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "locked/pub/r")); err == nil {
		t.Errorf("locked/pub/r exists: the plant reached the real folder")
	}
	wantAbsent(t, mark)
}
