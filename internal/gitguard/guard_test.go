//go:build unix

package gitguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// The guard's unit tests play the session by hand between Start and
// Check: what a session could do to the git directories of a root.

// start is Start once the kernel's coarse clock has moved past what the
// test did before (startLive): the person's own changes are then
// strictly before the session's start, as they are when a person starts
// a session.
//
// As in a session with a mount layer, the mount plan has read the roots'
// tree indexes just before, and the end walk goes through them
// (walk_index.go); startLive is the walk without an index.
func start(t *testing.T, roots []sandbox.Root, plan *layout.MountPlan) *Guard {
	t.Helper()
	return startLive(t, roots, withIndexes(t, roots, plan))
}

// withIndexes is plan (a new one when nil) with the tree indexes of the
// roots but those of origin "tmp", as the mount plan reads them, kept in
// a store of the test's own.
func withIndexes(t *testing.T, roots []sandbox.Root, plan *layout.MountPlan) *layout.MountPlan {
	t.Helper()
	if plan == nil {
		plan = &layout.MountPlan{}
	}
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := treeindex.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan.IndexStore = store
	for _, r := range roots {
		if r.Origin != "tmp" {
			plan.Indexes = append(plan.Indexes, treeindex.Scan(r.Path, store.Load(r.Path), IndexWatch()...))
		}
	}
	return plan
}

// startLive is start with no index: the end walk lists every folder.
func startLive(t *testing.T, roots []sandbox.Root, plan *layout.MountPlan) *Guard {
	t.Helper()
	// A file's ctime can be ahead of the coarse clock Start reads, by a
	// tick or more (multigrain timestamps: once the kernel hands out a
	// fine-grained stamp, no later stamp is older). A probe made now is
	// stamped no earlier than anything the test made before it: the
	// clock is waited for until it has passed the probe's stamp.
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(probe, &st); err != nil {
		t.Fatal(err)
	}
	for now := (unix.Timespec{}); now.Nano() <= st.Ctim.Nano(); unix.ClockGettime(ctimeClock, &now) {
		time.Sleep(time.Millisecond)
	}
	return Start(roots, plan, "")
}

// pinned is the mount layer's plan for the git directories gitDirs of
// the root ws: each pinned with the folders above it, as PlanMounts
// pins them.
func pinned(ws string, gitDirs ...string) *layout.MountPlan {
	plan := &layout.MountPlan{}
	for _, gd := range gitDirs {
		for d := gd; d != ws && d != "/"; d = filepath.Dir(d) {
			plan.Pinned = append(plan.Pinned, d)
		}
	}
	return plan
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
}

// git runs git in dir with no system or global config.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func initRepo(t *testing.T, dir string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	git(t, dir, "init", "-q")
	return filepath.Join(dir, ".git")
}

func root(t *testing.T) (string, []sandbox.Root) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws, []sandbox.Root{{Path: ws, Origin: "cwd"}}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// action returns the report's action for gitDir, or fails.
func action(t *testing.T, rep Report, gitDir string) Action {
	t.Helper()
	for _, a := range rep.Neutralized {
		if a.GitDir == gitDir {
			return a
		}
	}
	t.Fatalf("no action on %s in %+v", gitDir, rep)
	return Action{}
}

func quarantines(gitDir string) []string {
	m, _ := filepath.Glob(filepath.Join(gitDir, quarantinePrefix+"*"))
	return m
}

// TestGuardUnchanged: repositories whose code-running parts did not
// change are not touched, whatever they hold: the person's own pager,
// alias, include and hook, while the session commits there (the mount
// layer pinned the git directory, so its listing changing says nothing).
func TestGuardUnchanged(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	gd := initRepo(t, filepath.Join(ws, "a"))
	git(t, filepath.Join(ws, "a"), "config", "core.pager", "less -R")
	git(t, filepath.Join(ws, "a"), "config", "alias.x", "!echo mine")
	write(t, filepath.Join(gd, "hooks/pre-commit"), "#!/bin/sh\n", 0o755)
	config := read(t, filepath.Join(gd, "config"))
	g := start(t, roots, pinned(ws, gd))
	// Harmless changes: the index, objects, a commit.
	write(t, filepath.Join(ws, "a/f"), "x\n", 0o644)
	git(t, filepath.Join(ws, "a"), "add", "f")
	git(t, filepath.Join(ws, "a"), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
	if rep := g.Check(); !rep.Empty() {
		t.Errorf("Check() = %+v, want nothing", rep)
	}
	if !strings.HasPrefix(read(t, filepath.Join(gd, "config")), config) || len(quarantines(gd)) > 0 {
		t.Errorf("the repository was touched")
	}
}

// TestGuardChangedRepository: in a repository that existed, with a
// config the mount layer did not bind read-only, a config written during
// the session loses every code-running entry (with no snapshot of the
// start, the person's own pager cannot be told from a planted one: it
// goes to the quarantine too); the session's harmless entries and every
// other byte stay.
func TestGuardChangedRepository(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	gd := initRepo(t, filepath.Join(ws, "a"))
	git(t, filepath.Join(ws, "a"), "config", "core.pager", "less -R")
	g := start(t, roots, pinned(ws, gd))
	planted := read(t, filepath.Join(gd, "config")) + "[user]\n\tname = kept\n[core]\n\tfsmonitor = \"touch /tmp/x\" ; planted\n[filter \"lfs\"]\n\tsmudge = evil %f\n\tclean = evil\n"
	write(t, filepath.Join(gd, "config"), planted, 0o644)
	rep := g.Check()
	a := action(t, rep, gd)
	slices.Sort(a.Removed)
	if want := []string{"config: core.fsmonitor", "config: core.pager", "config: filter.lfs.clean", "config: filter.lfs.smudge"}; !slices.Equal(a.Removed, want) {
		t.Errorf("removed %q, want %q", a.Removed, want)
	}
	got := read(t, filepath.Join(gd, "config"))
	want := strings.Replace(strings.Replace(planted, "\tsmudge = evil %f\n\tclean = evil\n", "", 1), "\tfsmonitor = \"touch /tmp/x\" ; planted\n", "\t ; planted\n", 1)
	want = strings.Replace(want, "\tpager = less -R\n", "", 1)
	if got != want {
		t.Errorf("config after:\n%s\nwant:\n%s", got, want)
	}
	removed := read(t, filepath.Join(a.Quarantine, "config.removed"))
	for _, w := range []string{"fsmonitor = \"touch /tmp/x\"", "smudge = evil %f", "[filter \"lfs\"]"} {
		if !strings.Contains(removed, w) {
			t.Errorf("config.removed lacks %q:\n%s", w, removed)
		}
	}
	if !strings.Contains(removed, "pager = less -R") {
		t.Errorf("config.removed lacks the person's pager:\n%s", removed)
	}
	// Done once: a second Check finds nothing code-running left.
	if rep := g.Check(); !rep.Empty() {
		t.Errorf("second Check() = %+v", rep)
	}
}

// TestGuardNewRepository: a repository made during the session loses its
// code-running config, its hooks (a file, a symlink), and its linked
// worktree's and submodule's planted parts; its .sample hooks and
// everything else stay.
func TestGuardNewRepository(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	g := start(t, roots, nil)
	gd := initRepo(t, filepath.Join(ws, "new"))
	git(t, filepath.Join(ws, "new"), "config", "core.hooksPath", "/tmp/h")
	git(t, filepath.Join(ws, "new"), "config", "diff.pdf.textconv", "evil")
	write(t, filepath.Join(gd, "hooks/post-checkout"), "#!/bin/sh\n", 0o755)
	os.Symlink("/bin/true", filepath.Join(gd, "hooks/pre-push"))
	write(t, filepath.Join(gd, "modules/s/HEAD"), "ref: refs/heads/main\n", 0o644)
	os.MkdirAll(filepath.Join(gd, "modules/s/objects"), 0o755)
	os.MkdirAll(filepath.Join(gd, "modules/s/refs"), 0o755)
	write(t, filepath.Join(gd, "modules/s/hooks/pre-commit"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(gd, "config.worktree"), "[core]\n\tsshCommand = evil\n", 0o644)
	samples := len(quarantines(gd))
	rep := g.Check()
	a := action(t, rep, gd)
	slices.Sort(a.Removed)
	want := []string{"config.worktree: core.sshcommand", "config: core.hookspath", "config: diff.pdf.textconv", "hooks/post-checkout", "hooks/pre-push"}
	if !slices.Equal(a.Removed, want) {
		t.Errorf("removed %q, want %q", a.Removed, want)
	}
	sub := action(t, rep, filepath.Join(gd, "modules/s"))
	if !slices.Equal(sub.Removed, []string{"hooks/pre-commit"}) {
		t.Errorf("submodule: removed %q", sub.Removed)
	}
	if _, err := os.Lstat(filepath.Join(a.Quarantine, "hooks/pre-push")); err != nil {
		t.Errorf("the symlinked hook is not in the quarantine: %v", err)
	}
	hooks, _ := os.ReadDir(filepath.Join(gd, "hooks"))
	for _, h := range hooks {
		if !strings.HasSuffix(h.Name(), ".sample") {
			t.Errorf("hook %s left", h.Name())
		}
	}
	if len(hooks) == 0 || samples != 0 {
		t.Errorf("the samples went too (%d left)", len(hooks))
	}
	if out := git(t, filepath.Join(ws, "new"), "config", "--list", "--show-origin"); strings.Contains(out, "hookspath") || strings.Contains(out, "textconv") {
		t.Errorf("git still reads:\n%s", out)
	}
}

// TestGuardFreshInit: git init, add and commit during the session leave
// nothing for the guard to do.
func TestGuardFreshInit(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	g := start(t, roots, nil)
	dir := filepath.Join(ws, "p")
	gd := initRepo(t, dir)
	write(t, filepath.Join(dir, "a"), "a\n", 0o644)
	git(t, dir, "add", "a")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
	config := read(t, filepath.Join(gd, "config"))
	if rep := g.Check(); !rep.Empty() {
		t.Errorf("Check() = %+v", rep)
	}
	if read(t, filepath.Join(gd, "config")) != config || len(quarantines(gd)) > 0 {
		t.Errorf("a fresh repository was touched")
	}
}

// TestGuardRenamed: where no pin holds it (no mount layer), a repository
// moved during the session (its parent renamed) may have been moved into
// a place git is run in: its code-running parts go to its quarantine,
// and so do those of the one planted at its old path. Pinned, the person's
// repository cannot move (TestGuardUnchanged).
func TestGuardRenamed(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	gd := initRepo(t, filepath.Join(ws, "sub"))
	git(t, filepath.Join(ws, "sub"), "config", "core.editor", "vim")
	g := start(t, roots, nil)
	if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub2")); err != nil {
		t.Fatal(err)
	}
	initRepo(t, filepath.Join(ws, "sub"))
	git(t, filepath.Join(ws, "sub"), "config", "core.fsmonitor", "evil")
	rep := g.Check()
	if a := action(t, rep, gd); !slices.Equal(a.Removed, []string{"config: core.fsmonitor"}) {
		t.Errorf("removed %q", a.Removed)
	}
	if a := action(t, rep, filepath.Join(ws, "sub2/.git")); !slices.Equal(a.Removed, []string{"config: core.editor"}) {
		t.Errorf("moved repository: removed %q", a.Removed)
	}
}

// TestGuardSymlinks: a config or hooks/ planted as a symlink is moved
// itself, never written through: the file it points at, outside the git
// directory, stays byte-identical. A .git symlink or file leading to a
// repository elsewhere in the root is followed; one leading outside the
// writable roots is never acted on.
func TestGuardSymlinks(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	outside := t.TempDir()
	g := start(t, roots, nil)
	target := filepath.Join(outside, "evil.gitconfig")
	write(t, target, "[core]\n\tfsmonitor = evil\n", 0o644)
	gd := initRepo(t, filepath.Join(ws, "a"))
	os.Remove(filepath.Join(gd, "config"))
	os.Symlink(target, filepath.Join(gd, "config"))
	os.RemoveAll(filepath.Join(gd, "hooks"))
	os.Symlink(outside, filepath.Join(gd, "hooks"))
	// A repository under another name, which a .git file points at.
	store := filepath.Join(ws, "store")
	initRepo(t, store)
	os.Rename(filepath.Join(store, ".git"), filepath.Join(ws, "hidden"))
	os.RemoveAll(store)
	write(t, filepath.Join(ws, "w/.git"), "gitdir: ../hidden\n", 0o644)
	git(t, filepath.Join(ws, "w"), "config", "alias.x", "!evil")
	// One outside the roots, made now with planted code, reached by a
	// symlink: not the guard's to touch.
	far := initRepo(t, filepath.Join(outside, "far"))
	git(t, filepath.Join(outside, "far"), "config", "core.pager", "evil")
	farConfig := read(t, filepath.Join(far, "config"))
	os.MkdirAll(filepath.Join(ws, "v"), 0o755)
	os.Symlink(far, filepath.Join(ws, "v/.git"))

	rep := g.Check()
	a := action(t, rep, gd)
	slices.Sort(a.Removed)
	if want := []string{"config (not a regular file)", "hooks (not a folder)"}; !slices.Equal(a.Removed, want) {
		t.Errorf("removed %q, want %q", a.Removed, want)
	}
	if got := read(t, target); got != "[core]\n\tfsmonitor = evil\n" {
		t.Errorf("the symlink's target was written: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(a.Quarantine, "config")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the config symlink is not in the quarantine: %v", err)
	}
	if h := action(t, rep, filepath.Join(ws, "hidden")); !slices.Equal(h.Removed, []string{"config: alias.x"}) {
		t.Errorf("hidden: removed %q", h.Removed)
	}
	if read(t, filepath.Join(far, "config")) != farConfig || len(quarantines(far)) > 0 {
		t.Errorf("a repository outside the writable roots was touched")
	}
	if !slices.ContainsFunc(rep.Failed, func(f Failure) bool {
		return f.GitDir == far && strings.Contains(f.Error, "outside the writable roots")
	}) {
		t.Errorf("the planted repository outside the roots is not listed as failed: %+v", rep.Failed)
	}
	for _, n := range rep.Neutralized {
		if strings.HasPrefix(n.GitDir, outside) {
			t.Errorf("acted outside the roots: %+v", n)
		}
	}
}

// TestGuardIncludes: an include planted in a new repository is cut; in
// an existing one, an included file that gains a code-running entry
// (through a nested, relative include) has its include cut from the git
// directory's config, the included files left as they are.
func TestGuardIncludes(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	gd := initRepo(t, filepath.Join(ws, "a"))
	write(t, filepath.Join(ws, "cfg/one.inc"), "[include]\n\tpath = two.inc\n", 0o644)
	write(t, filepath.Join(ws, "cfg/two.inc"), "[color]\n\tui = auto\n", 0o644)
	git(t, filepath.Join(ws, "a"), "config", "include.path", "../../cfg/one.inc")
	before := read(t, filepath.Join(gd, "config"))
	g := start(t, roots, nil)
	write(t, filepath.Join(ws, "cfg/two.inc"), "[color]\n\tui = auto\n[core]\n\tpager = evil\n", 0o644)
	rep := g.Check()
	a := action(t, rep, gd)
	if want := []string{"config: include.path -> ../../cfg/two.inc: core.pager"}; !slices.Equal(a.Removed, want) {
		t.Errorf("removed %q, want %q", a.Removed, want)
	}
	if got := read(t, filepath.Join(gd, "config")); got != strings.Replace(before, "[include]\n\tpath = ../../cfg/one.inc\n", "[include]\n", 1) {
		t.Errorf("config after:\n%s", got)
	}
	if !strings.Contains(read(t, filepath.Join(ws, "cfg/two.inc")), "pager = evil") {
		t.Errorf("the included file was written")
	}
}

// TestGuardUnfreezes: a session that could set the immutable or
// append-only flag on what it planted does not stop the guard running as
// root: it clears them on what it moves, and says so.
func TestGuardUnfreezes(t *testing.T) {
	requireGit(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for chattr")
	}
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("no chattr here")
	}
	ws, roots := root(t)
	g := start(t, roots, nil)
	gd := initRepo(t, filepath.Join(ws, "a"))
	git(t, filepath.Join(ws, "a"), "config", "core.fsmonitor", "evil")
	write(t, filepath.Join(gd, "hooks/pre-commit"), "#!/bin/sh\n", 0o755)
	for _, c := range [][]string{{"+i", "hooks/pre-commit"}, {"+a", "hooks"}, {"+i", "config"}, {"+i", "."}} {
		if out, err := exec.Command("chattr", c[0], filepath.Join(gd, c[1])).CombinedOutput(); err != nil {
			t.Skipf("chattr %s: %v %s", c[0], err, out)
		}
		defer exec.Command("chattr", "-i", "-a", filepath.Join(gd, c[1])).Run()
	}
	rep := g.Check()
	a := action(t, rep, gd)
	slices.Sort(a.Unfrozen)
	if want := []string{".", "config", "hooks", "hooks/pre-commit"}; !slices.Equal(a.Unfrozen, want) {
		t.Errorf("unfrozen %q, want %q", a.Unfrozen, want)
	}
	if strings.Contains(read(t, filepath.Join(gd, "config")), "fsmonitor") {
		t.Errorf("the config still holds the entry")
	}
}

// TestGuardSpecialFiles: fifos where git reads a config, an include or a
// hook are looked at without being opened for reading (the guard would
// hang on a fifo, or set off a device's open) and go to the quarantine
// like any planted part.
func TestGuardSpecialFiles(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	g := start(t, roots, nil)
	gd := initRepo(t, filepath.Join(ws, "a"))
	for _, f := range []string{"config.worktree", "hooks/pre-commit", "inc"} {
		if err := unix.Mkfifo(filepath.Join(gd, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, filepath.Join(ws, "a"), "config", "include.path", "inc")
	done := make(chan Report)
	go func() { done <- g.Check() }()
	var rep Report
	select {
	case rep = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Check hangs on a fifo")
	}
	a := action(t, rep, gd)
	slices.Sort(a.Removed)
	want := []string{"config.worktree (not a regular file)", "config: include.path", "config: include.path -> inc", "hooks/pre-commit"}
	if !slices.Equal(a.Removed, want) {
		t.Errorf("removed %q, want %q", a.Removed, want)
	}
}
