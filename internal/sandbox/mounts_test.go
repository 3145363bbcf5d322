package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// makeTree builds a layout under dir in os.Root's notation: "d/" a folder,
// "f" a file (its content its name), "a => t" a symlink to t.
func makeTree(t *testing.T, dir string, layout ...string) {
	t.Helper()
	for _, e := range layout {
		path := filepath.Join(dir, e)
		var err error
		switch name, target, link := strings.Cut(e, " => "); {
		case link:
			path = filepath.Join(dir, name)
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(target, path)
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(path, 0o755)
		default:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.WriteFile(path, []byte(e), 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// canonTemp is a canonical t.TempDir().
func canonTemp(t *testing.T) string {
	t.Helper()
	d, err := Canonical("/", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mountsTree is the shared layout of the mount tests: a workspace "ws"
// with protected paths, a git directory by content only, a .git symlink
// pointing out, deny_read files, and a secret folder outside it.
var mountsTree = []string{
	"ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/", "ws/.git/config", "ws/.git/hooks/inner/",
	"ws/sub/.git/HEAD", "ws/sub/code.go",
	"ws/.vscode/settings.json",
	"ws/.mcp.json",
	"ws/src/.bashrc", "ws/src/main.go",
	"ws/other/.git => ../../outside",
	"ws/vendor/lib.git/HEAD", "ws/vendor/lib.git/objects/", "ws/vendor/lib.git/refs/",
	"ws/.env", "ws/app/.env", "ws/app/env.go",
	"ws/dsh-fs.yaml",
	"outside/HEAD",
	"secret/key",
	"keys/a.pem", "keys/b.txt",
}

func TestMountPlan(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, mountsTree...)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{
		Mode:         policy.WorkspaceWrite,
		Cwd:          ws,
		Protected:    policy.DefaultProtected,
		DenyRead:     []string{".env", tmp + "/secret/**", tmp + "/keys/*.pem", tmp + "/missing/**"},
		ConfigFiles:  []string{filepath.Join(ws, "dsh-fs.yaml")},
		TrustedFiles: []string{filepath.Join(tmp, "outside", "HEAD"), filepath.Join(ws, "absent.yaml")},
	}
	in := func(names ...string) []string {
		out := []string{}
		for _, n := range names {
			out = append(out, filepath.Join(tmp, n))
		}
		return out
	}
	tests := []struct {
		name   string
		origin string
		budget int
		want   MountPlan
	}{
		{
			name: "workspace", origin: "cwd",
			want: MountPlan{
				// ws/other/.git is a symlink: skipped, and outside/ is not
				// walked. dsh-fs.yaml is a loaded config file in the root;
				// outside/HEAD is trusted but outside every root.
				// Of a git directory only its code-running parts that
				// exist (ws/.git's config and hooks; ws/sub/.git and
				// vendor/lib.git hold none).
				// The protected paths missing at the start get a
				// placeholder (placeholders.go): .codex and its like, and
				// in the root's .git, config.worktree, and info and
				// objects/info, the first missing folders of the others.
				ReadOnly: in("ws/.agents", "ws/.claude", "ws/.codex", "ws/.dsh-fs", "ws/.git/config", "ws/.git/config.worktree",
					"ws/.git/hooks", "ws/.git/info", "ws/.git/objects/info", "ws/.idea", "ws/.mcp.json", "ws/.vscode", "ws/dsh-fs.yaml", "ws/src/.bashrc"),
				Hidden:      in("secret"),
				HiddenFiles: in("keys/a.pem", "ws/.env", "ws/app/.env"),
				// The folders between the root (rebound by the read-only
				// tree) and each read-only path, and each git directory
				// (by content or by its name .git) with the folders
				// above it.
				Pinned:   in("ws/.git", "ws/.git/objects", "ws/src", "ws/sub", "ws/sub/.git", "ws/vendor", "ws/vendor/lib.git"),
				Writable: in("ws"),
			},
		},
		{
			name: "tmp root not walked", origin: "tmp",
			want: MountPlan{
				ReadOnly:    in("ws/dsh-fs.yaml"),
				Hidden:      in("secret"),
				HiddenFiles: in("keys/a.pem"),
				Pinned:      []string{},
				Writable:    in("ws"),
			},
		},
	}
	// A root is read whole whatever the walk budget: no budget of a walk
	// decides what a root's plan protects.
	noBudget := tests[0]
	noBudget.name, noBudget.origin, noBudget.budget = "no budget for a root", "writable_roots", 5
	tests = append(tests, noBudget)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.budget > 0 {
				defer func(b int) { walkBudget = b }(walkBudget)
				walkBudget = tc.budget
			}
			got := PlanMounts(p, []Root{{Path: ws, Origin: tc.origin}})
			if !equalPlans(got, tc.want) {
				t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(tc.want))
			}
		})
	}
}

func TestMountPlanCovers(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp,
		"ws/secrets/a", "ws/secrets/deep/secrets/b",
		"ws/.vscode/tasks.json",
		"ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/",
		"ws/.git/hooks/secrets/x",
	)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"secrets", "**/.vscode/**"}}
	got := PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{
		// Hiding wins over protection (.vscode), a hidden folder covers
		// what lies beneath it (deep/secrets), and a read-only folder is
		// not walked into (.git/hooks/secrets): of .git, its hooks.
		ReadOnly:    []string{ws + "/.git/hooks"},
		Hidden:      []string{ws + "/.vscode", ws + "/secrets"},
		HiddenFiles: []string{},
	}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
	if j := planJSON(PlanMounts(policy.Policy{Cwd: ws}, nil)); j != `{"read_only":[],"hidden":[],"hidden_files":[],"hidden_sockets":[],"outside_read_only":true,"writable":[],"pinned":[]}` {
		t.Errorf("empty plan = %s", j)
	}
}

func TestMountPlanAbsoluteGlob(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "keys/a/id_rsa", "keys/a/deep/id_rsa", "keys/a/id_rsa.pub", "keys/b/id_ed25519/x",
		"home => keys")
	// The glob is spelled through a symlink: matched on the canonical
	// spelling, planned once.
	p := policy.Policy{Cwd: tmp, DenyRead: []string{tmp + "/home/*/id_*", tmp + "/keys/*/id_*"}}
	tests := []struct {
		name   string
		budget int
		want   MountPlan
	}{
		{name: "walked", want: MountPlan{
			// "*" crosses no "/": a/deep/id_rsa is not covered.
			ReadOnly: []string{}, Hidden: []string{tmp + "/keys/b/id_ed25519"},
			HiddenFiles: []string{tmp + "/keys/a/id_rsa", tmp + "/keys/a/id_rsa.pub"},
		}},
		{name: "budget", budget: 3, want: MountPlan{
			// keys holds 2 entries and a 3: the walk stops there.
			ReadOnly: []string{}, Hidden: []string{}, HiddenFiles: []string{},
			Partial: []string{tmp + "/keys"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.budget > 0 {
				defer func(b int) { walkBudget = b }(walkBudget)
				walkBudget = tc.budget
			}
			if got := PlanMounts(p, nil); !equalPlans(got, tc.want) {
				t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(tc.want))
			}
		})
	}
}

// TestMountPlanConfig pins that a deny_read glob, which a session may
// add, never hides a config file or a folder holding one from the dsh-fs
// the shell runs, nor stops the walk there: what else it covers is still
// hidden entry by entry (ws/conf/.git, protected too: hiding wins).
func TestMountPlanConfig(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp,
		"ws/.git/HEAD", "ws/conf/dsh-fs.yaml", "ws/conf/key", "ws/conf/.git/HEAD",
		"etc/dsh-fs/config.yaml", "etc/dsh-fs/other.yaml", "etc/passwd", "etc/ssl/cert",
	)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Cwd: ws, Protected: policy.DefaultProtected,
		DenyRead:     []string{ws, tmp + "/etc/**"},
		ConfigFiles:  []string{ws + "/conf/dsh-fs.yaml"},
		TrustedFiles: []string{tmp + "/etc/dsh-fs/config.yaml"},
	}
	got := PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{
		ReadOnly:    []string{ws + "/conf/dsh-fs.yaml"},
		Hidden:      []string{tmp + "/etc/ssl", ws + "/.git", ws + "/conf/.git"},
		HiddenFiles: []string{tmp + "/etc/dsh-fs/other.yaml", tmp + "/etc/passwd", ws + "/conf/key"},
	}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
}

// TestMountWalkGlobCovers pins walkGlob.covers, matchCovers with a literal
// prefilter, to matchCovers itself: the walk and the fence must agree.
func TestMountWalkGlobCovers(t *testing.T) {
	globs := append([]string{"**/.env", "secrets", "/h/u/.ssh/**", "a/*/c", "**/x[ab]/**", `\*lit`, "[", ".", "**"}, policy.DefaultProtected...)
	names := []string{".", "a", ".git", "sub/.git", "sub/.git/hooks/pre-commit", ".gitx", "x/.vscode", ".vscode/s.json",
		"/h/u/.ssh", "/h/u/.ssh/id", "/h/u/.sshx", "a/b/c", "a/b/c/d", "a/c", "p/xa/q", "xc", "*lit", "slit", ".bashrc",
		"d/.bashrc", "secrets/k", "deep/secrets", "/w/.env", ".env.local"}
	for _, g := range globs {
		w := newWalkGlob(g)
		for _, n := range names {
			if got, want := w.covers(splitSlash(n)), matchCovers(g, n); got != want {
				t.Errorf("walkGlob(%q).covers(%q) = %v, matchCovers says %v", g, n, got, want)
			}
		}
	}
}

// equalPlans compares the paths of two plans; a nil Pinned or Writable
// in b is not compared.
func equalPlans(a, b MountPlan) bool {
	return slices.Equal(a.ReadOnly, b.ReadOnly) && slices.Equal(a.Hidden, b.Hidden) &&
		slices.Equal(a.HiddenFiles, b.HiddenFiles) && slices.Equal(a.Partial, b.Partial) &&
		(b.Pinned == nil || slices.Equal(a.Pinned, b.Pinned)) && (b.Writable == nil || slices.Equal(a.Writable, b.Writable)) &&
		slices.Equal(a.Unpinned, b.Unpinned) && slices.Equal(a.Unreadable, b.Unreadable)
}

func planJSON(m MountPlan) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func TestMountLayer(t *testing.T) {
	ok, why := MountLayer()
	if root := os.Geteuid() == 0; ok != root && why != "needs cap_sys_admin" {
		t.Errorf("MountLayer() = %v, %q as euid %d", ok, why, os.Geteuid())
	}
	if !ok && why == "" {
		t.Error("MountLayer() refused without saying why")
	}
}

// TestMountApply applies a plan in a child with its own mount namespace
// (the way dsh-fs exec starts its shell): once with each way of mounting
// (apply, classic), once without applying it (control: it proves the
// probes can fail), and once with ws/.git swapped for a symlink after the
// plan (swap). After each it checks the parent's namespace saw nothing.
func TestMountApply(t *testing.T) {
	if os.Getenv("MOUNTS_CHILD") != "" {
		t.Skip("in the child")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount (run the tests as root to cover the mount layer)")
	}
	tmp := canonTemp(t)
	makeTree(t, tmp, mountsTree...)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{".env", tmp + "/secret/**"}}
	plan := PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
	if err := MakePlaceholders(&plan); err != nil {
		t.Fatal(err)
	}
	if !plan.OutsideReadOnly {
		t.Log("no mount_setattr here: the read-only tree is not tested")
	}
	// Where a test binary's coverage goes (kernelWritableExtra).
	if err := os.Mkdir(filepath.Join(tmp, "extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A device node made before the session: nodev must make it useless.
	if err := unix.Mknod(filepath.Join(ws, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	// In the folder it hides: Apply opens it before mounting anything.
	empty := filepath.Join(tmp, "secret", "empty")
	if err := os.WriteFile(empty, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	// swap runs last: it moves ws/.git while it runs.
	for _, mode := range []string{"apply", "classic", "control", "swap"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMountApplyChild$", "-test.v")
			// GORACE: a race-enabled child would otherwise sleep 1 s at exit.
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "MOUNTS_CHILD="+mode, "MOUNTS_PLAN="+planJSON(plan),
				"MOUNTS_EMPTY="+empty, "MOUNTS_WS="+ws, "MOUNTS_SECRET="+tmp+"/secret", "MOUNTS_EXTRA="+tmp+"/extra")
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestMountApplyChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			// Nothing leaked into this namespace.
			if fails := probeMounts(ws, tmp+"/secret"); len(fails) != len(mountProbes) {
				t.Errorf("after the child, in the parent, these still hold: %v", heldProbes(fails))
			}
			info, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(info), tmp) {
				t.Errorf("the parent's mountinfo lists %s:\n%s", tmp, info)
			}
		})
	}
}

// TestMountApplyChild is TestMountApply's child, run in its own mount
// namespace; it does nothing elsewhere.
func TestMountApplyChild(t *testing.T) {
	mode := os.Getenv("MOUNTS_CHILD")
	if mode == "" {
		t.Skip("run by TestMountApply in a mount namespace of its own")
	}
	var plan MountPlan
	if err := json.Unmarshal([]byte(os.Getenv("MOUNTS_PLAN")), &plan); err != nil {
		t.Fatal(err)
	}
	ws, secret := os.Getenv("MOUNTS_WS"), os.Getenv("MOUNTS_SECRET")
	if mode != "apply" {
		// Without mount_setattr (classic) the supervisor plans no
		// read-only tree; swap tests the binds after it.
		plan.OutsideReadOnly = false
	}
	if mode == "swap" {
		applySwapped(t, plan, ws)
		return
	}
	// A mount beneath a protected folder, made read-only by the
	// recursive bind: open_tree and mount_setattr do that, the classic
	// remount does not (bindReadOnlyClassic).
	objects := filepath.Join(ws, ".git", "hooks", "inner")
	if mode != "classic" {
		if err := unix.Mount("tmpfs", objects, "tmpfs", 0, "size=4k"); err != nil {
			t.Fatal(err)
		}
	}
	if mode != "control" {
		classicMounts = mode == "classic"
		kernelWritableExtra = []string{os.Getenv("MOUNTS_EXTRA")}
		if err := plan.Apply(os.Getenv("MOUNTS_EMPTY")); err != nil {
			t.Fatal(err)
		}
	}
	if mode != "classic" {
		err := os.WriteFile(filepath.Join(objects, "probe"), nil, 0o644)
		if held := errors.Is(err, unix.EROFS); held != (mode == "apply") {
			t.Errorf("write beneath a mount inside ws/.git/hooks: %v (mode %s)", err, mode)
		}
	}
	fails := probeMounts(ws, secret)
	if mode == "control" {
		if len(fails) != len(mountProbes) {
			t.Errorf("without the mounts, these hold anyway: %v", heldProbes(fails))
		}
	} else {
		for _, f := range fails {
			t.Error(f)
		}
	}
	// The mount layer narrows, it never blocks the workspace itself.
	if err := os.WriteFile(filepath.Join(ws, "sub", "new.go"), []byte("x"), 0o644); err != nil {
		t.Errorf("write elsewhere in the workspace: %v", err)
	}
	os.Remove(filepath.Join(ws, "sub", "new.go"))
	// Nor a git directory's data: git add and commit write there.
	if err := os.WriteFile(filepath.Join(ws, ".git", "index.lock"), []byte("x"), 0o644); err != nil {
		t.Errorf("write of ws/.git/index.lock: %v", err)
	}
	os.Remove(filepath.Join(ws, ".git", "index.lock"))
	// A pinned folder above a protected path cannot be renamed.
	if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub2")); (mode == "control") != (err == nil) {
		t.Errorf("rename of ws/sub, above ws/sub/.git: %v (mode %s)", err, mode)
	} else if err == nil {
		os.Rename(filepath.Join(ws, "sub2"), filepath.Join(ws, "sub"))
	} else if !errors.Is(err, unix.EBUSY) {
		t.Errorf("rename of ws/sub: %v, want EBUSY", err)
	}
	if plan.OutsideReadOnly {
		probeReadOnlyTree(t, ws)
		extra := filepath.Join(os.Getenv("MOUNTS_EXTRA"), "covcounters")
		if err := os.WriteFile(extra, nil, 0o644); err != nil {
			t.Errorf("kernelWritableExtra under the read-only tree: %v", err)
		}
		os.Remove(extra)
	}
}

// probeReadOnlyTree checks, under the read-only tree, that metadata
// outside ws cannot change, that devices still take writes, and that a
// device node in ws opens for nothing.
func probeReadOnlyTree(t *testing.T, ws string) {
	outside := filepath.Join(filepath.Dir(ws), "outside", "HEAD")
	if err := os.Chmod(outside, 0o666); !errors.Is(err, unix.EROFS) {
		t.Errorf("chmod outside the roots: %v, want EROFS", err)
	}
	if err := os.Chown(outside, 1, 1); !errors.Is(err, unix.EROFS) {
		t.Errorf("chown outside the roots: %v, want EROFS", err)
	}
	if err := unix.Setxattr(outside, "user.x", []byte("1"), 0); !errors.Is(err, unix.EROFS) {
		t.Errorf("setxattr outside the roots: %v, want EROFS", err)
	}
	if err := os.Chmod(filepath.Join(ws, "src", "main.go"), 0o600); err != nil {
		t.Errorf("chmod in the root: %v", err)
	}
	if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		t.Errorf("open /dev/null for writing: %v", err)
	} else {
		f.Close()
	}
	if f, err := os.OpenFile(filepath.Join(ws, "null"), os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Error("a device node in the root opened: want nodev")
	}
}

// applySwapped swaps ws/.git for a symlink to a folder outside after the
// plan: Apply must refuse it, not make the link's target read-only.
// Before that, Apply must refuse an empty file that is not empty, before
// it mounts anything.
func applySwapped(t *testing.T, plan MountPlan, ws string) {
	dotgit := filepath.Join(ws, ".git")
	err := plan.Apply(filepath.Join(dotgit, "HEAD"))
	if err == nil || !strings.Contains(err.Error(), "not an empty regular file") {
		t.Errorf("Apply with a non-empty file to bind over secrets = %v", err)
	}
	if fails := probeMounts(ws, os.Getenv("MOUNTS_SECRET")); len(fails) != len(mountProbes) {
		t.Errorf("a failed Apply mounted: %v", heldProbes(fails))
	}
	outside := filepath.Join(filepath.Dir(ws), "outside")
	if err := os.Rename(dotgit, dotgit+".moved"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(dotgit+".moved", dotgit)
	if err := os.Symlink(outside, dotgit); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dotgit)
	err = plan.Apply(os.Getenv("MOUNTS_EMPTY"))
	if err == nil || !strings.Contains(err.Error(), dotgit) {
		t.Errorf("Apply with %s swapped for a symlink = %v, want an error naming it", dotgit, err)
	}
	// A folder to pin, or a writable root, swapped for a symlink fails
	// the same way, before anything is mounted on where it leads.
	for _, bad := range []MountPlan{{Pinned: []string{dotgit}}, {OutsideReadOnly: true, Writable: []string{dotgit}}} {
		if err := bad.Apply(""); err == nil || !strings.Contains(err.Error(), dotgit) {
			t.Errorf("Apply(%s) = %v, want an error naming %s", planJSON(bad), err, dotgit)
		}
	}
	// Without mount_setattr there is no read-only tree to make.
	classicMounts = true
	err = MountPlan{OutsideReadOnly: true}.Apply("")
	classicMounts = false
	if err == nil || !strings.Contains(err.Error(), "needs mount_setattr") {
		t.Errorf("Apply of a read-only tree with classic mounts = %v", err)
	}
	if err := os.WriteFile(filepath.Join(outside, "probe"), nil, 0o644); err != nil {
		t.Errorf("the symlink's target was covered: %v", err)
	}
	os.Remove(filepath.Join(outside, "probe"))
}

// mountProbes are what the mount layer must make true, by name.
var mountProbes = []string{"ws/.git/config read-only", "ws/.git/hooks read-only", "ws/.mcp.json read-only",
	"secret lists empty", "secret read-only", "ws/.env reads empty", "ws/.git pinned", "ws/sub/.git pinned"}

// probeMounts returns "probe: why" for each of mountProbes that does not
// hold now. It undoes what a probe that got through wrote.
func probeMounts(ws, secret string) []string {
	var fails []string
	fail := func(i int, format string, args ...any) {
		fails = append(fails, mountProbes[i]+": "+fmt.Sprintf(format, args...))
	}
	erofs := func(i int, path string, flag int) {
		f, err := os.OpenFile(path, flag|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			if flag&os.O_CREATE != 0 {
				os.Remove(path)
			}
		}
		if !errors.Is(err, unix.EROFS) {
			fail(i, "open for writing: %v, want EROFS", err)
		}
	}
	erofs(0, filepath.Join(ws, ".git", "config"), 0)
	erofs(1, filepath.Join(ws, ".git", "hooks", "probe"), os.O_CREATE)
	erofs(2, filepath.Join(ws, ".mcp.json"), 0)
	if names, err := os.ReadDir(secret); err != nil || len(names) != 0 {
		fail(3, "%d entries, %v", len(names), err)
	}
	erofs(4, filepath.Join(secret, "probe"), os.O_CREATE)
	if b, err := os.ReadFile(filepath.Join(ws, ".env")); err != nil || len(b) != 0 {
		fail(5, "read %q, %v", b, err)
	}
	// With its data writable, a git directory moved aside would let a
	// new one with a planted config take its place.
	for i, dotgit := range map[int]string{6: filepath.Join(ws, ".git"), 7: filepath.Join(ws, "sub", ".git")} {
		if err := os.Rename(dotgit, dotgit+".aside"); !errors.Is(err, unix.EBUSY) {
			fail(i, "rename: %v, want EBUSY", err)
			if err == nil {
				os.Rename(dotgit+".aside", dotgit)
			}
		}
	}
	return fails
}

// heldProbes names the probes that fails does not list.
func heldProbes(fails []string) []string {
	var held []string
	for _, p := range mountProbes {
		if !slices.ContainsFunc(fails, func(f string) bool { return strings.HasPrefix(f, p+":") }) {
			held = append(held, p)
		}
	}
	return held
}

// TestMountPlanLinks: a regular file in a root that is the same file as
// a deny_read file (a hard link made before the session) is hidden like
// it, for an anchored glob outside the root and a relative one inside;
// the plan hands over the identities it saw, each with its glob. A file
// with several links that is no secret's stays.
func TestMountPlanLinks(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "sec/key", "ws/.env", "ws/plain", "ws/deep/x/")
	ws := filepath.Join(tmp, "ws")
	for old, link := range map[string]string{"sec/key": "ws/deep/x/notes", "ws/.env": "ws/env.txt", "ws/plain": "ws/plain2"} {
		if err := os.Link(filepath.Join(tmp, old), filepath.Join(tmp, link)); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, DenyRead: []string{tmp + "/sec/**", ".env"}}
	got := PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{ReadOnly: []string{}, Hidden: []string{tmp + "/sec"},
		HiddenFiles: []string{ws + "/.env", ws + "/deep/x/notes", ws + "/env.txt"}}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
	var globs []string
	for _, id := range got.DenyIdentities {
		var st unix.Stat_t
		unix.Stat(filepath.Join(ws, map[string]string{tmp + "/sec/**": "deep/x/notes", "**/.env": "env.txt"}[id.Glob]), &st)
		if uint64(st.Ino) != id.Ino || uint64(st.Dev) != id.Dev {
			t.Errorf("identity %+v is not the linked file's (%d, %d)", id, st.Dev, st.Ino)
		}
		globs = append(globs, id.Glob)
	}
	slices.Sort(globs)
	if want := []string{"**/.env", tmp + "/sec/**"}; !slices.Equal(globs, want) {
		t.Errorf("identities for %q, want %q", globs, want)
	}

	// A tree too large for the identity budget: its folder is partial,
	// and the links to what was not collected stay.
	defer func(b int) { identityBudget = b }(identityBudget)
	identityBudget = 0
	got = PlanMounts(p, []Root{{Path: ws, Origin: "cwd"}})
	want.HiddenFiles, want.Partial = []string{ws + "/.env", ws + "/env.txt"}, []string{tmp + "/sec"}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts past the identity budget:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
}

// TestMountPlanPins pins planPins: every folder from the outermost root
// holding a read-only path down to its parent, the root itself only when
// the read-only tree does not rebind it, nested roots not twice, paths
// outside every root not at all, and past the budget the path unpinned.
func TestMountPlanPins(t *testing.T) {
	roots := []string{"/tmp", "/tmp/a/ws", "/w"}
	ro := []string{"/tmp/a/ws/sub/.git", "/tmp/a/ws/.git", "/w/x/y/.git", "/elsewhere/.git"}
	tests := []struct {
		name     string
		rebound  bool
		budget   int
		pinned   []string
		unpinned []string
	}{
		{name: "rebound", rebound: true, pinned: []string{"/tmp/a", "/tmp/a/ws/sub", "/w/x", "/w/x/y"}},
		{name: "not rebound", pinned: []string{"/tmp", "/tmp/a", "/tmp/a/ws", "/tmp/a/ws/sub", "/w", "/w/x", "/w/x/y"}},
		{name: "budget", rebound: true, budget: 3, pinned: []string{"/tmp/a", "/tmp/a/ws/sub"}, unpinned: []string{"/w/x/y/.git"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.budget > 0 {
				defer func(b int) { maxPinned = b }(maxPinned)
				maxPinned = tc.budget
			}
			pinned, unpinned := planPins(ro, roots, tc.rebound)
			if !slices.Equal(pinned, tc.pinned) || !slices.Equal(unpinned, tc.unpinned) {
				t.Errorf("planPins = %q, %q; want %q, %q", pinned, unpinned, tc.pinned, tc.unpinned)
			}
		})
	}
}
