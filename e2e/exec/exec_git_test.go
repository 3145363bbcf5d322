//go:build unix

package exec

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// The TestExecGit* tests (issue 21): git code planted during a session
// never runs for the person afterwards. The session plants it with the
// real git, the person's git is run after exec has ended, outside any
// session, and the planted code would touch a marker file outside the
// workspace.

// requireGit skips a test that needs the git command.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here: the git guard's tests run the real git")
	}
}

// gitEnv is the environment of git outside and inside the session: no
// system or global config, a fixed identity.
var gitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

// personGit runs git as the person after the session: in dir, with the
// environment of gitEnv, and returns its exit status and output.
func personGit(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, gitEnv...)
	out, err := c.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("git %v: %v", args, err)
	}
	return 0, string(out)
}

// gitRepo makes a repository in dir with one commit, as the person had it
// before the session.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteTree(t, dir, map[string]string{"README": "hello\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-qm", "first"}} {
		if code, out := personGit(t, dir, args...); code != 0 {
			t.Fatalf("git %v: %s", args, out)
		}
	}
}

// gitGuardReport is exec's end report of the git guard, from its stderr.
type gitGuardReport struct {
	Op       string `json:"op"`
	GitGuard struct {
		Neutralized []struct {
			GitDir     string   `json:"git_dir"`
			Quarantine string   `json:"quarantine"`
			Removed    []string `json:"removed"`
			Unfrozen   []string `json:"unfrozen"`
		} `json:"neutralized"`
		Failed []struct {
			GitDir string `json:"git_dir"`
			Error  string `json:"error"`
		} `json:"failed"`
		NotChecked []string `json:"not_checked"`
		MovedAside []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"moved_aside"`
		Restored []string `json:"restored"`
	} `json:"git_guard"`
}

// guardReport decodes the git guard's line of exec's stderr; ok is false
// when there is none.
func guardReport(t *testing.T, errs string) (r gitGuardReport, ok bool) {
	t.Helper()
	for _, line := range strings.Split(errs, "\n") {
		if strings.Contains(line, `"git_guard"`) {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("the git guard's report %q: %v", line, err)
			}
			return r, true
		}
	}
	return r, false
}

// wantNeutralized checks that the report names gitDir as acted on, with
// each of removed among what it removed, and returns its quarantine.
func wantNeutralized(t *testing.T, errs, gitDir string, removed ...string) string {
	t.Helper()
	r, ok := guardReport(t, errs)
	if !ok {
		t.Errorf("exec reported nothing of the git guard; stderr:\n%s", errs)
		return ""
	}
	for _, n := range r.GitGuard.Neutralized {
		if n.GitDir != gitDir {
			continue
		}
		for _, want := range removed {
			if !slices.Contains(n.Removed, want) {
				t.Errorf("%s: removed %q, want %q among them", gitDir, n.Removed, want)
			}
		}
		return n.Quarantine
	}
	t.Errorf("the report does not name %s: %s", gitDir, errs)
	return ""
}

// wantNoQuarantine fails if the git guard made a quarantine folder in
// gitDir.
func wantNoQuarantine(t *testing.T, gitDir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(gitDir, "dsh-fs-quarantine-*")); len(m) > 0 {
		t.Errorf("the guard acted on %s: %s", gitDir, m)
	}
}

// renamedParentAttack is the rename-parent attack of issue 21, twice: on
// the person's repository sub (made before the session), which the mount
// layer's pins hold, and on a repository mine that the session makes
// itself, which nothing pins, so the git guard is what stops it. Each
// time the folder above .git is moved aside and a new repository with
// core.fsmonitor planted in its place.
const renamedParentAttack = `if mv sub sub2; then echo moved-person; fi; ` +
	`git init -q mine && mv mine mine2 && mkdir mine && git -C mine init -q && ` +
	`git -C mine config core.fsmonitor "touch $MARK" && echo planted`

// wantRenamedParentStopped checks what renamedParentAttack left in ws:
// where the mount layer holds, the person's sub could not be moved; where
// it moved (no mount layer), the guard neutralized what was planted in
// its place. The planted mine is neutralized, its moved-aside original
// untouched, and the person's git status runs nothing in either.
func wantRenamedParentStopped(t *testing.T, ws, out, errs, mark string, status func(dir string)) string {
	t.Helper()
	if ok, _ := layout.MountLayer(); ok && strings.Contains(out, "moved-person") {
		t.Errorf("the person's sub was moved though the mount layer pins the folders above its .git:\n%s", errs)
	}
	if !strings.Contains(out, "moved-person") && !strings.Contains(errs, "Device or resource busy") {
		t.Errorf("mv sub failed otherwise than on a pin (EBUSY):\n%s", errs)
	}
	status(filepath.Join(ws, "mine"))
	status(filepath.Join(ws, "sub"))
	wantAbsent(t, mark)
	q := wantNeutralized(t, errs, filepath.Join(ws, "mine/.git"), "config: core.fsmonitor")
	wantNoQuarantine(t, filepath.Join(ws, "mine2/.git"))
	return q
}

// TestExecGitRenamedParent: the shell renames the folder above a nested
// .git and plants a new repository in its place with core.fsmonitor
// (renamedParentAttack). After the session the person's git status there
// must not run it; a repository moved aside is untouched.
func TestExecGitRenamedParent(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	gitRepo(t, filepath.Join(ws, "sub"))
	config := filepath.Join(ws, "sub/.git/config")
	before := harness.FileSHA256(t, config)
	mark := filepath.Join(marks, "PWNED")
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), renamedParentAttack)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("the attack did not run: exit %d\n%s\n%s", code, out, errs)
	}
	q := wantRenamedParentStopped(t, ws, out, errs, mark, func(dir string) { personGit(t, dir, "status") })
	if code, got := personGit(t, filepath.Join(ws, "mine"), "config", "--get", "core.fsmonitor"); code != 1 {
		t.Errorf("git still reads core.fsmonitor = %q (exit %d)", got, code)
	}
	if q != "" && !strings.Contains(harness.ReadFile(t, filepath.Join(q, "config.removed")), "fsmonitor = touch "+mark) {
		t.Errorf("the quarantine does not hold the entry: %q", harness.ReadFile(t, filepath.Join(q, "config.removed")))
	}
	// The person's repository, wherever it is now, is unchanged.
	person := filepath.Join(ws, "sub")
	if strings.Contains(out, "moved-person") {
		person = filepath.Join(ws, "sub2")
	}
	if got := harness.FileSHA256(t, filepath.Join(person, ".git/config")); got != before {
		t.Errorf("%s/.git/config changed", person)
	}
	wantNoQuarantine(t, filepath.Join(person, ".git"))
	if code, out := personGit(t, filepath.Join(ws, "mine"), "status"); code != 0 {
		t.Errorf("git status in the neutralized repository: exit %d: %s", code, out)
	}
}

// TestExecGitPlantedRepo: a repository made during the session with a
// pre-commit hook, core.pager, core.editor and a "!" alias: after the
// session none of them is what git reads or runs there.
func TestExecGitPlantedRepo(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	mark := filepath.Join(marks, "PWNED")
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `git init -q new && cd new && `+
		`printf '#!/bin/sh\ntouch "%s.hook"\n' "$MARK" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && `+
		`git config core.pager "touch $MARK.pager" && git config core.editor "touch $MARK.editor" && `+
		`git config alias.st "!touch $MARK.alias" && echo planted`)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("the session did not plant: exit %d\n%s\n%s", code, out, errs)
	}
	repo := filepath.Join(ws, "new")
	if code, out := personGit(t, repo, "commit", "-q", "--allow-empty", "-m", "x"); code != 0 {
		t.Errorf("git commit: exit %d: %s", code, out)
	}
	personGit(t, repo, "st")
	for _, m := range []string{".hook", ".alias"} {
		wantAbsent(t, mark+m)
	}
	for _, key := range []string{"core.pager", "core.editor", "alias.st"} {
		if code, got := personGit(t, repo, "config", "--get", key); code != 1 {
			t.Errorf("git still reads %s = %q", key, got)
		}
	}
	q := wantNeutralized(t, errs, filepath.Join(repo, ".git"),
		"config: core.pager", "config: core.editor", "config: alias.st", "hooks/pre-commit")
	if q != "" {
		fi, err := os.Stat(filepath.Join(q, "hooks/pre-commit"))
		if err != nil || fi.Mode()&0o111 != 0 {
			t.Errorf("the quarantined hook: %v, %v", fi, err)
		}
	}
	wantAbsent(t, filepath.Join(repo, ".git/hooks/pre-commit"))
}

// TestExecGitIncludeChanged: an existing repository includes a file of
// the workspace, which the mount layer does not hold read-only; the
// session writes core.fsmonitor into that file. The include is cut from
// the repository's config, so git status does not run it.
func TestExecGitIncludeChanged(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	repo := filepath.Join(ws, "r")
	gitRepo(t, repo)
	harness.WriteTree(t, ws, map[string]string{"shared.gitconfig": "[color]\n\tui = auto\n"})
	if code, out := personGit(t, repo, "config", "include.path", "../../shared.gitconfig"); code != 0 {
		t.Fatal(out)
	}
	mark := filepath.Join(marks, "PWNED")
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> shared.gitconfig && echo planted`)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	personGit(t, repo, "status")
	wantAbsent(t, mark)
	wantNeutralized(t, errs, filepath.Join(repo, ".git"), "config: include.path -> ../../shared.gitconfig: core.fsmonitor")
}

// TestExecGitUntouched: a repository the session could not change (the
// mount layer holds its .git read-only), with code-running parts of the
// person's own, stays byte-identical and exec reports nothing.
func TestExecGitUntouched(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	if ok, why := layout.MountLayer(); !ok {
		t.Skipf("the mount layer is not available here (%s): the session may change .git, which the guard then acts on", why)
	}
	ws := harness.CanonicalTemp(t)
	gitRepo(t, ws)
	personGit(t, ws, "config", "core.pager", "less -R")
	harness.WriteTree(t, ws, map[string]string{".git/hooks/post-commit": "#!/bin/sh\necho mine\n"})
	os.Chmod(filepath.Join(ws, ".git/hooks/post-commit"), 0o755)
	config, hook := harness.FileSHA256(t, filepath.Join(ws, ".git/config")), harness.FileSHA256(t, filepath.Join(ws, ".git/hooks/post-commit"))
	env := append(execEnv(t, ws), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `git status >/dev/null; git log -q >/dev/null; echo x > new.txt; `+
		`git config core.editor evil 2>/dev/null; echo "config=$?"`)
	if code != 0 || !strings.Contains(out, "config=") || strings.Contains(out, "config=0") {
		t.Fatalf("exit %d (the session should not write .git/config)\n%s\n%s", code, out, errs)
	}
	if got := harness.FileSHA256(t, filepath.Join(ws, ".git/config")); got != config {
		t.Errorf(".git/config changed")
	}
	if got := harness.FileSHA256(t, filepath.Join(ws, ".git/hooks/post-commit")); got != hook {
		t.Errorf("the person's hook changed")
	}
	wantNoQuarantine(t, filepath.Join(ws, ".git"))
	if _, ok := guardReport(t, errs); ok {
		t.Errorf("exec reported acting on an unchanged repository: %s", errs)
	}
}

// TestExecGitInitUntouched: git init, add and commit of a fresh
// repository inside the session stay possible, and the repository is
// not touched afterwards: its config as the session left it, its hooks
// only the samples, no quarantine, no report.
func TestExecGitInitUntouched(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws := harness.CanonicalTemp(t)
	env := append(execEnv(t, ws), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `git init -q proj && cd proj && echo hi > a && git add a && `+
		`git commit -qm first && sha256sum .git/config > ../config.sum && ls .git/hooks > ../hooks.list && echo done`)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	repo := filepath.Join(ws, "proj")
	sum, _, _ := strings.Cut(harness.ReadFile(t, filepath.Join(ws, "config.sum")), " ")
	if got := harness.FileSHA256(t, filepath.Join(repo, ".git/config")); got != sum {
		t.Errorf("the config changed after the session")
	}
	for _, h := range strings.Fields(harness.ReadFile(t, filepath.Join(ws, "hooks.list"))) {
		if !strings.HasSuffix(h, ".sample") {
			t.Errorf("git init left hook %s", h)
		}
	}
	if got := strings.Join(harness.DirNames(t, filepath.Join(repo, ".git/hooks")), " "); got != strings.Join(strings.Fields(harness.ReadFile(t, filepath.Join(ws, "hooks.list"))), " ") {
		t.Errorf("hooks after the session: %s", got)
	}
	wantNoQuarantine(t, filepath.Join(repo, ".git"))
	if _, ok := guardReport(t, errs); ok {
		t.Errorf("exec reported acting on a fresh repository: %s", errs)
	}
	if code, out := personGit(t, repo, "log", "--oneline"); code != 0 || !strings.Contains(out, "first") {
		t.Errorf("git log after the session: exit %d: %s", code, out)
	}
}

// TestExecGitRenamedParentAgent is TestExecGitRenamedParent in a session
// of a real ordinary user (not root, not the overflow uid), whose
// supervisor runs as that user too: it neutralizes the planted
// repository, and what it makes there is the user's.
func TestExecGitRenamedParentAgent(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	uid := agentUser(t)
	bin, dir := harness.UnprivilegedBin(t)
	ws, marks, home, system := filepath.Join(dir, "ws"), filepath.Join(dir, "marks"), filepath.Join(dir, "home"), filepath.Join(dir, "etc")
	for _, d := range []string{marks, home, system} {
		os.MkdirAll(d, 0o755)
	}
	gitRepo(t, filepath.Join(ws, "sub"))
	chownTree(t, ws)
	os.Chown(marks, uid, uid)
	os.Chown(home, uid, uid)
	mark := filepath.Join(marks, "PWNED")
	env := append(agentExecEnv(t, bin, system, "HOME="+home, "DSH_FS_TEST_HOME="+home, "MARK="+mark), gitEnv...)
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", renamedParentAttack)
	c.Dir, c.Env = ws, env
	asAgent(t, c)
	code, _, out, errs := harness.Run(t, c, nil)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("the attack did not run: exit %d\n%s\n%s", code, out, errs)
	}
	q := wantRenamedParentStopped(t, ws, out, errs, mark, func(dir string) {
		g := exec.Command("git", "-C", dir, "status")
		g.Env = env
		asAgent(t, g)
		g.Run()
	})
	if fi, err := os.Stat(q); err == nil {
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
			t.Errorf("the quarantine is owned by uid %d, want the user's %d", st.Uid, uid)
		}
	}
}

// TestExecGitUnderFakeGitDir: the shell makes a folder look like a git
// directory (HEAD, objects, refs) and plants a repository beneath it; a
// walk that stops at git directories would never see the planted one.
func TestExecGitUnderFakeGitDir(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	mark := filepath.Join(marks, "PWNED")
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `mkdir -p fake/objects fake/refs && echo 'ref: refs/heads/x' > fake/HEAD && `+
		`git init -q fake/deeper && git -C fake/deeper config core.fsmonitor "touch $MARK" && echo planted`)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	personGit(t, filepath.Join(ws, "fake/deeper"), "status")
	wantAbsent(t, mark)
	wantNeutralized(t, errs, filepath.Join(ws, "fake/deeper/.git"), "config: core.fsmonitor")
}

// TestExecGitImmutable: a session that can make what it planted
// immutable (as root, while it keeps CAP_LINUX_IMMUTABLE) does not stop
// the guard: the supervisor clears the flag, moves what was planted and
// says so.
func TestExecGitImmutable(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("no chattr here")
	}
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	mark := filepath.Join(marks, "PWNED")
	gd := filepath.Join(ws, "new/.git")
	t.Cleanup(func() { exec.Command("chattr", "-i", gd, filepath.Join(gd, "config")).Run() })
	env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
	code, out, errs := execSh(t, env, ws, fenced(ws), `git init -q new && git -C new config core.fsmonitor "touch $MARK" && `+
		`chattr +i new/.git/config new/.git 2>/dev/null && echo immutable`)
	if !strings.Contains(out, "immutable") {
		t.Skipf("the session cannot make a file immutable here (exit %d): nothing to clear", code)
	}
	personGit(t, filepath.Join(ws, "new"), "status")
	wantAbsent(t, mark)
	wantNeutralized(t, errs, gd, "config: core.fsmonitor")
	if r, _ := guardReport(t, errs); len(r.GitGuard.Neutralized) == 1 && !slices.Contains(r.GitGuard.Neutralized[0].Unfrozen, ".") {
		t.Errorf("the report does not say the flag was cleared: %s", errs)
	}
}

// TestExecGitCannotAct: where the supervisor cannot move what was planted
// it says so, loudly: a repository of root's in an ordinary user's
// workspace includes a file of the user's, which the session fills with
// core.fsmonitor; the user's supervisor cannot cut the include from
// root's config, and its report names the repository, what was planted
// and why, under failed.
func TestExecGitCannotAct(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	uid := agentUser(t)
	bin, dir := harness.UnprivilegedBin(t)
	ws, home, system := filepath.Join(dir, "ws"), filepath.Join(dir, "home"), filepath.Join(dir, "etc")
	for _, d := range []string{ws, home, system} {
		os.MkdirAll(d, 0o755)
	}
	harness.WriteTree(t, ws, map[string]string{"shared.gitconfig": "[color]\n\tui = auto\n"})
	chownTree(t, ws)
	os.Chown(home, uid, uid)
	repo := filepath.Join(ws, "r")
	gitRepo(t, repo) // root's, which the user may read and not write
	if code, out := personGit(t, repo, "config", "include.path", "../../shared.gitconfig"); code != 0 {
		t.Fatal(out)
	}
	config := harness.FileSHA256(t, filepath.Join(repo, ".git/config"))
	env := append(agentExecEnv(t, bin, system, "HOME="+home, "DSH_FS_TEST_HOME="+home), gitEnv...)
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c",
		`printf '[core]\n\tfsmonitor = evil\n' >> shared.gitconfig && echo planted`)
	c.Dir, c.Env = ws, env
	asAgent(t, c)
	code, _, out, errs := harness.Run(t, c, nil)
	if code != 0 || !strings.Contains(out, "planted") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r, ok := guardReport(t, errs)
	gd := filepath.Join(repo, ".git")
	if !ok || len(r.GitGuard.Failed) != 1 || r.GitGuard.Failed[0].GitDir != gd || !strings.Contains(r.GitGuard.Failed[0].Error, "permission denied") {
		t.Errorf("want one failure for %s (permission denied) in the report; stderr:\n%s", gd, errs)
	}
	if !strings.Contains(errs, "include.path -> ../../shared.gitconfig: core.fsmonitor") {
		t.Errorf("the failure does not say what was planted: %s", errs)
	}
	if got := harness.FileSHA256(t, filepath.Join(repo, ".git/config")); got != config {
		t.Errorf("root's config changed")
	}
}

// The TestExecGitWork* tests (issue 23): an agent's ordinary git day runs
// in a session, and the parts of a git directory that can run code or
// redirect git stay out of its reach (docs/design.md §4 step 5, §10).

// gitWorkday is a day of git in a session, under bash, in the repository
// repo of the workspace: every command an agent commits with, and a linked
// worktree inside the workspace committed in, made in the session (wt)
// and before it (pre, whose git folder the mount layer pins). It prints
// "workday done" only when every step succeeded.
const gitWorkday = `set -e
cd repo
B=$(git symbolic-ref --short HEAD)
echo a > a.txt && git add a.txt && git commit -qm a
git branch feature && git switch -q feature
echo f > f.txt && git add f.txt && git commit -qm f
git checkout -q "$B"
echo b > b.txt && git add b.txt && git commit -qm b
echo wip >> README && git stash -q && git stash pop -q && git commit -qam wip
git tag v1
git switch -q feature && git rebase -q "$B"
git switch -q "$B" && git merge -q --no-edit feature
git reset -q --hard HEAD~1 && git merge -q --ff-only feature
git gc -q
git worktree add -q ../wt -b side
cd ../wt && echo w > w.txt && git add w.txt && git commit -qm w
cd ../pre && echo p > p.txt && git add p.txt && git commit -qm p
echo workday done
`

// wantWorkdayDone checks, as the person after the session, what
// gitWorkday left in ws: the commits on both branches, and a repository
// git finds whole.
func wantWorkdayDone(t *testing.T, ws, out, errs string, git func(dir string, args ...string) (int, string)) {
	t.Helper()
	if !strings.Contains(out, "workday done") {
		t.Fatalf("git's workday in the session stopped:\n%s\n%s", out, errs)
	}
	repo := filepath.Join(ws, "repo")
	for branch, subject := range map[string]string{"side": "w", "pre": "p"} {
		if code, log := git(repo, "log", "--format=%s", branch); code != 0 || strings.Fields(log)[0] != subject {
			t.Errorf("the worktree's commit is not on %s: %d %q", branch, code, log)
		}
	}
	if code, log := git(repo, "log", "--format=%s"); code != 0 || !strings.Contains(log, "f\nwip\nb\na\nfirst") {
		t.Errorf("the repository's history is not the rebased one: %d %q", code, log)
	}
	if code, msg := git(repo, "fsck", "--no-progress"); code != 0 {
		t.Errorf("git fsck after the session: %d %s", code, msg)
	}
}

// TestExecGitWorkday: as root, gitWorkday in a session succeeds.
func TestExecGitWorkday(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	ws := harness.CanonicalTemp(t)
	gitRepo(t, filepath.Join(ws, "repo"))
	personGit(t, filepath.Join(ws, "repo"), "worktree", "add", "-q", "../pre", "-b", "pre")
	env := append(execEnv(t, ws), gitEnv...)
	args := append(append([]string{"exec"}, fenced(ws)...), "--", "bash", "-c", gitWorkday)
	_, _, out, errs := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, args...), nil)
	wantWorkdayDone(t, ws, out, errs, func(dir string, args ...string) (int, string) { return personGit(t, dir, args...) })
}

// TestExecGitWorkdayAgent: gitWorkday as the ordinary user dshfs-agent,
// whose session's mount layer lives in a user namespace.
func TestExecGitWorkdayAgent(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	uid := agentUser(t)
	bin, dir := harness.UnprivilegedBin(t)
	ws, home, system := filepath.Join(dir, "ws"), filepath.Join(dir, "home"), filepath.Join(dir, "etc")
	for _, d := range []string{home, system} {
		os.MkdirAll(d, 0o755)
	}
	gitRepo(t, filepath.Join(ws, "repo"))
	personGit(t, filepath.Join(ws, "repo"), "worktree", "add", "-q", "../pre", "-b", "pre")
	chownTree(t, ws)
	os.Chown(home, uid, uid)
	env := append(agentExecEnv(t, bin, system, "HOME="+home, "DSH_FS_TEST_HOME="+home), gitEnv...)
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "bash", "-c", gitWorkday)
	c.Dir, c.Env = ws, env
	asAgent(t, c)
	_, _, out, errs := harness.Run(t, c, nil)
	wantWorkdayDone(t, ws, out, errs, func(dir string, args ...string) (int, string) {
		g := exec.Command("git", append([]string{"-C", dir}, args...)...)
		g.Env = env
		asAgent(t, g)
		msg, err := g.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(msg)
		}
		return 0, string(msg)
	})
}

// gitPlant tries, in a session, what would make the person's git run
// code: core.fsmonitor and core.hooksPath in the repository's config, a
// pre-commit hook, and moving .git aside to put a new one in its place.
// Each attempt prints its exit status.
const gitPlant = `cd repo
git config core.fsmonitor "touch $MARK"; echo "fsmonitor=$?"
git config core.hooksPath "$PWD/../myhooks"; echo "hookspath=$?"
printf '#!/bin/sh\ntouch %s\n' "$MARK" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit; echo "hook=$?"
mv .git gitx; echo "mvgit=$?"
cd ../bare-hooks
mkdir -p .git/hooks && printf '#!/bin/sh\ntouch %s\n' "$MARK" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo "newhooks=planted"
true`

// TestExecGitWorkPlantRefused: with the rest of .git writable, what runs
// code stays read-only in the shell: each planting fails, with a message
// that names the file, and the person's git status and commit afterwards
// run nothing. A repository with no hooks folder at the start gets one
// (nothing was there to bind), and the git guard quarantines it when the
// session ends.
func TestExecGitWorkPlantRefused(t *testing.T) { testGitPlantRefused(t, false) }

// TestExecGitWorkPlantRefusedAgent is TestExecGitWorkPlantRefused as the
// ordinary user dshfs-agent, whose mount layer lives in a user
// namespace.
func TestExecGitWorkPlantRefusedAgent(t *testing.T) {
	requireUserNamespaces(t)
	testGitPlantRefused(t, true)
}

func testGitPlantRefused(t *testing.T, agent bool) {
	harness.RequireLandlock(t)
	requireGit(t)
	if ok, why := layout.MountLayer(); !ok && !agent {
		t.Skip("no mount layer here: " + why)
	}
	ws, marks := harness.CanonicalTemp(t), t.TempDir()
	var bin, home, system string
	if agent {
		var dir string
		bin, dir = harness.UnprivilegedBin(t)
		ws, marks, home, system = filepath.Join(dir, "ws"), filepath.Join(dir, "marks"), filepath.Join(dir, "home"), filepath.Join(dir, "etc")
		for _, d := range []string{ws, marks, home, system} {
			os.MkdirAll(d, 0o755)
		}
	}
	repo, bare := filepath.Join(ws, "repo"), filepath.Join(ws, "bare-hooks")
	gitRepo(t, repo)
	gitRepo(t, bare)
	if err := os.RemoveAll(filepath.Join(bare, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(marks, "PWNED")
	harness.WriteTree(t, ws, map[string]string{"myhooks/pre-commit": "#!/bin/sh\ntouch " + mark + "\n"})
	os.Chmod(filepath.Join(ws, "myhooks/pre-commit"), 0o755)
	var code int
	var out, errs string
	if agent {
		uid := agentUser(t)
		chownTree(t, ws)
		os.Chown(marks, uid, uid)
		os.Chown(home, uid, uid)
		env := append(agentExecEnv(t, bin, system, "HOME="+home, "DSH_FS_TEST_HOME="+home, "MARK="+mark), gitEnv...)
		c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", gitPlant)
		c.Dir, c.Env = ws, env
		asAgent(t, c)
		code, _, out, errs = harness.Run(t, c, nil)
	} else {
		env := append(execEnv(t, ws, "MARK="+mark), gitEnv...)
		code, out, errs = execSh(t, env, ws, fenced(ws), gitPlant)
	}
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, attempt := range []string{"fsmonitor", "hookspath", "hook", "mvgit"} {
		if strings.Contains(out, attempt+"=0\n") {
			t.Errorf("%s succeeded in the session:\n%s\n%s", attempt, out, errs)
		}
	}
	// git's own words for the bound config (the rename of config.lock
	// onto it): docs/design.md §10 says what they mean.
	if !strings.Contains(errs, "could not write config file .git/config: Device or resource busy") {
		t.Errorf("git config's failure does not name .git/config:\n%s", errs)
	}
	if !strings.Contains(out, "newhooks=planted") {
		t.Errorf("the session could not make hooks where there were none:\n%s\n%s", out, errs)
	}
	wantNeutralized(t, errs, filepath.Join(bare, ".git"), "hooks/pre-commit")
	// The person, root, runs git afterwards (in the user's repository
	// too, hence safe.directory): nothing planted runs.
	for _, dir := range []string{repo, bare} {
		personGit(t, dir, "-c", "safe.directory=*", "status")
		os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c\n"), 0o644)
		personGit(t, dir, "-c", "safe.directory=*", "add", "c.txt")
		if code, msg := personGit(t, dir, "-c", "safe.directory=*", "commit", "-qm", "c"); code != 0 {
			t.Errorf("the person's commit in %s: %d %s", dir, code, msg)
		}
	}
	wantAbsent(t, mark)
}

// TestWriteGitParts: the file tool follows the same rule as the shell:
// a git directory's code-running parts are protected, at any nesting, and
// its data is writable in workspace-write mode.
func TestWriteGitParts(t *testing.T) {
	requireGit(t)
	ws := harness.CanonicalTemp(t)
	gitRepo(t, filepath.Join(ws, "repo"))
	if code, out := personGit(t, filepath.Join(ws, "repo"), "worktree", "add", "-q", "../wt", "-b", "side"); code != 0 {
		t.Fatal(out)
	}
	env := harness.Env(t, ws)
	for _, tc := range []struct {
		path    string
		allowed bool
	}{
		{"repo/.git/config", false},
		{"repo/.git/hooks/x", false},
		{"repo/.git/hooks/pre-commit", false},
		{"repo/.git/info/attributes", false},
		{"repo/.git/objects/info/alternates", false},
		{"repo/.git/worktrees/wt/commondir", false},
		{"repo/.git/worktrees/wt/gitdir", false},
		{"repo/.git/worktrees/wt/config.worktree", false},
		{"repo/.git/worktrees/w/commondir", false}, // not there yet
		{"repo/.git", false},
		{"wt/.git", false}, // the linked worktree's pointer
		{"repo/.git/COMMIT_EDITMSG", true},
		{"repo/.git/info/exclude", true},
		{"repo/.git/worktrees/wt/COMMIT_EDITMSG", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(ws, tc.path))
			code, res, out, errs := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "write", tc.path, "--content", "planted\n", "--overwrite"), nil)
			if tc.allowed {
				if code != 0 || !res.OK {
					t.Errorf("write %s: exit %d, %s%s", tc.path, code, out, errs)
				}
				return
			}
			if code == 0 || res.Error.Code != "FS_SANDBOX_DENIED" || !strings.Contains(res.Error.Message, "protected path") {
				t.Errorf("write %s: exit %d, want FS_SANDBOX_DENIED as a protected path: %s%s", tc.path, code, out, errs)
			}
			if after, _ := os.ReadFile(filepath.Join(ws, tc.path)); string(after) != string(before) {
				t.Errorf("%s changed: %q", tc.path, after)
			}
		})
	}
	if code, out := personGit(t, filepath.Join(ws, "wt"), "status", "--short"); code != 0 {
		t.Errorf("git status in the worktree afterwards: %d %s", code, out)
	}
}
