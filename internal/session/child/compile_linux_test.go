package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// opsHelperEnv makes this test binary a helper of the compiled mounts'
// tests (TestMain): "probe" prints what the probes see, "apply" applies
// the plan with applyFiles first, "ops" starts a rawinit first process
// that runs the compiled plan and then this binary's probes, in new
// user, mount and network namespaces (the ordinary user's way).
const opsHelperEnv = "DSH_FS_MOUNTOPS_HELPER"

// opsCaseEnv carries the opsCase to the helper, as JSON.
const opsCaseEnv = "DSH_FS_MOUNTOPS_CASE"

// opsCase is a plan and where the probes look.
type opsCase struct {
	Files  plan.Files
	Empty  string
	Dir    string
	Root   string
	Probes []string
}

// runOpsHelper is the helper's life; its exit status.
func runOpsHelper(mode string) int {
	var c opsCase
	if err := json.Unmarshal([]byte(os.Getenv(opsCaseEnv)), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	switch mode {
	case "apply":
		if err := (applier{}).applyFiles(&c.Files, c.Empty); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "apply-only":
		if err := (applier{}).applyFiles(&c.Files, c.Empty); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "ops":
		out, err := startOps(c, unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWNET)
		fmt.Print(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Print(probeAll(c))
	return 0
}

// startOps compiles c's plan and starts a first process in new
// namespaces clone that runs it, then this binary's probes as CMD;
// their output.
func startOps(c opsCase, clone uintptr) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return startOpsCmd(c, clone, self, true)
}

// startOpsCmd is startOps with CMD path: this binary's probes, or a
// program run with no argument; with init, the first process is pid 1
// of a PID namespace with its /proc.
func startOpsCmd(c opsCase, clone uintptr, path string, init bool) (string, error) {
	ops, err := CompileFiles(&c.Files, FilesTarget{EmptyFile: c.Empty, Dir: c.Dir, UserNamespace: clone&unix.CLONE_NEWUSER != 0})
	if err != nil {
		return "", err
	}
	// The test's own: a root namespace's mounts are shared, and a
	// session's supervisor starts it from a private one.
	private := rawinit.Call(unix.SYS_MOUNT, rawinit.Str("none"), rawinit.Str("/"), rawinit.Word(0),
		rawinit.Word(unix.MS_REC|unix.MS_PRIVATE), rawinit.Word(0))
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer null.Close()
	b, _ := json.Marshal(c)
	env := append(slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, opsHelperEnv+"=") || strings.HasPrefix(e, opsCaseEnv+"=")
	}), opsHelperEnv+"=probe", opsCaseEnv+"="+string(b), "GORACE=atexit_sleep_ms=0")
	// As a session starts (init): pid 1 of a PID namespace with its own
	// /proc, mounted after the ops (its /proc/self/fd paths are the
	// caller's procfs's).
	p, err := rawinit.Start(rawinit.Spec{Clone: clone, Init: init, MountProc: init, Path: path, Argv: []string{path}, Env: env, Ctty: -1,
		Files: []int{int(null.Fd()), int(w.Fd()), 2}, Ops: append([]rawinit.Op{private}, ops...)})
	w.Close()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if status, _, err := p.Wait(); err != nil || status != 0 {
		return out.String(), fmt.Errorf("the probes: status %d, %v", status, err)
	}
	return out.String(), nil
}

// errName is an error as its errno's name, else its text.
func errName(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// probeAll reads, writes, renames and chmods each probe path, then lists
// the mounts of "/" and beneath c.Root in mountinfo's order (mount point,
// root, options and type, c.Root written $ROOT); what each gives, one
// line each.
func probeAll(c opsCase) string {
	var b strings.Builder
	wd, err := os.Getwd()
	fmt.Fprintf(&b, "wd %s %s\n", strings.ReplaceAll(wd, c.Root, "$ROOT"), errName(err))
	for _, rel := range c.Probes {
		p := filepath.Join(c.Root, rel)
		fmt.Fprintf(&b, "%s: %s\n", rel, probePath(p))
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return b.String() + err.Error()
	}
	for _, line := range strings.Split(strings.TrimSpace(string(info)), "\n") {
		f := strings.Fields(line)
		dash := slices.Index(f, "-")
		// The session's own mounts and the root's: other mounts of
		// this machine come and go with other processes.
		if len(f) < 6 || dash < 0 || dash+1 >= len(f) || f[4] != "/" && !strings.HasPrefix(f[4], c.Root+"/") {
			continue
		}
		fmt.Fprintln(&b, strings.ReplaceAll(strings.Join([]string{f[4], f[3], f[5], f[dash+1]}, " "), c.Root, "$ROOT"))
	}
	return b.String()
}

// probePath is what reading, writing, renaming and chmod of p give.
func probePath(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "lstat " + errName(err)
	}
	var read, write string
	switch {
	case fi.Mode()&os.ModeSocket != 0:
		conn, err := net.Dial("unix", p)
		if err == nil {
			conn.Close()
		}
		read, write = "connect "+errName(err), "-"
	case fi.IsDir():
		names, err := os.ReadDir(p)
		var list []string
		for _, n := range names {
			list = append(list, n.Name())
		}
		read = fmt.Sprintf("%v %s", list, errName(err))
		f, err := os.OpenFile(filepath.Join(p, ".probe"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			os.Remove(filepath.Join(p, ".probe"))
		}
		write = errName(err)
	default:
		data, err := os.ReadFile(p)
		read = fmt.Sprintf("%q %s", data, errName(err))
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		write = errName(err)
	}
	err = os.Rename(p, p+".aside")
	if err == nil {
		os.Rename(p+".aside", p)
	}
	rename := errName(err)
	return fmt.Sprintf("read %s; write %s; rename %s; chmod %s", read, write, rename, errName(os.Chmod(p, fi.Mode().Perm())))
}

// opsFixture makes the tree, the plan and a listening socket: a
// workspace with .git, deny_read files and a folder, a socket outside
// and one gone since the plan, a cache under an overlay, a home folder
// under a read view, and a runtime folder with this session's record,
// its denial log and another session's record. owner, when not -1,
// owns it all.
func opsFixture(t testing.TB, owner int) opsCase {
	tmp := canonTemp(t)
	for d := tmp; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	makeTree(t, tmp, append(slices.Clone(mountsTree), "home/.gitconfig", "home/.ssh/id", "home/.cache/go-build/00/a",
		"ovl/upper/", "ovl/work/", "run/s1/record", "run/s1/denials/log", "run/s2/record", "sock/", "ws/src/sub/")...)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{".env", tmp + "/secret/**"}}
	planned := layout.PlanMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	if err := layout.MakePlaceholders(&planned); err != nil {
		t.Fatal(err)
	}
	files := planned.Files
	home := filepath.Join(tmp, "home")
	files.Overlays = []plan.Overlay{{Path: filepath.Join(home, ".cache/go-build"), Upper: filepath.Join(tmp, "ovl/upper"), Work: filepath.Join(tmp, "ovl/work")}}
	files.OverlayDir = filepath.Join(tmp, "ovl")
	files.View = &plan.ReadView{Covered: []string{home}, Kept: []string{filepath.Join(home, ".cache"), filepath.Join(home, ".gitconfig")}, Home: home}
	files.Runtime, files.Record = filepath.Join(tmp, "run"), filepath.Join(tmp, "run/s1/record")
	files.HiddenSockets = []string{filepath.Join(tmp, "sock/live"), filepath.Join(tmp, "sock/gone")}
	empty := filepath.Join(tmp, "empty")
	if err := os.WriteFile(empty, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	if owner >= 0 {
		filepath.Walk(tmp, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, owner, owner) })
	}
	l, err := net.Listen("unix", filepath.Join(tmp, "sock/live"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	os.Chmod(filepath.Join(tmp, "sock/live"), 0o777)
	return opsCase{Files: files, Empty: empty, Dir: filepath.Join(ws, "src"), Root: tmp, Probes: []string{
		"ws/.git", "ws/.git/config", "ws/.git/hooks", "ws/.mcp.json", "ws/.codex", "ws/.env", "ws/app/env.go", "ws/sub", "ws/sub/.git",
		"ws/src", "ws/src/main.go", "ws/src/sub", "outside/HEAD", "secret", "secret/key", "keys/a.pem", "sock/live",
		"home", "home/.gitconfig", "home/.ssh", "home/.cache/go-build", "home/.cache/go-build/00/a", "ovl",
		"run", "run/s1", "run/s1/record", "run/s1/denials", "run/s2", "empty"}}
}

// helperRun runs this binary as the helper mode with c, as uid (-1: as
// it is) in the namespaces attr makes; its stdout.
func helperRun(t *testing.T, self, mode string, c opsCase, attr *syscall.SysProcAttr) string {
	t.Helper()
	b, _ := json.Marshal(c)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), opsHelperEnv+"="+mode, opsCaseEnv+"="+string(b), "GORACE=atexit_sleep_ms=0")
	cmd.Dir, cmd.SysProcAttr = c.Dir, attr
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && mode == "ops" && strings.Contains(stderr.String(), "user namespace") {
		t.Skipf("this machine refuses an ordinary user a user namespace: %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("helper %s: %v\n%s%s", mode, err, out, stderr.String())
	}
	return string(out)
}

// resetOverlay empties the overlay's upper and work folders between runs.
func resetOverlay(t testing.TB, c opsCase, owner int) {
	for _, d := range []string{c.Files.Overlays[0].Upper, c.Files.Overlays[0].Work} {
		os.RemoveAll(d)
		os.Mkdir(d, 0o755)
		if owner >= 0 {
			os.Chown(d, owner, owner)
		}
	}
}

// diffLines says which lines of got and want differ.
func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var d []string
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			d = append(d, fmt.Sprintf("line %d:\n  ops: %s\n  Go:  %s", i+1, gl, wl))
		}
	}
	return strings.Join(d, "\n")
}

// TestCompiledMounts is the differential test of the compiled mounts:
// the same plan applied by applyFiles in a mount namespace of its own,
// and by the ops in a rawinit first process, gives the same answers to
// the same probes, mountinfo included; without either (control) the
// probes give others. Then, as an ordinary user, in new user, mount and
// network namespaces, the ops give the same answers again.
func TestCompiledMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount (run the tests as root to cover the mount layer)")
	}
	if err := mountAPIWhy(); err != nil {
		t.Skip(err)
	}
	uid := agentUser(t)
	c := opsFixture(t, uid)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	control := helperRun(t, self, "probe", c, &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS})
	resetOverlay(t, c, uid)
	applied := helperRun(t, self, "apply", c, &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS})
	if applied == control {
		t.Fatalf("applyFiles changed nothing the probes see:\n%s", applied)
	}
	resetOverlay(t, c, uid)
	ops, err := startOps(c, unix.CLONE_NEWNS)
	if err != nil {
		t.Fatalf("the ops: %v\n%s", err, ops)
	}
	if ops != applied {
		t.Errorf("the ops and applyFiles differ:\n%s", diffLines(ops, applied))
	}
	t.Run("ordinary user", func(t *testing.T) {
		resetOverlay(t, c, uid)
		helper := filepath.Join(t.TempDir(), "mountops-helper")
		for d := filepath.Dir(helper); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		b, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(helper, b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
		attr := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
		// The empty file bound over secrets is 0400 and the user's own:
		// its permission refuses a write before the read-only mount does.
		user := strings.ReplaceAll(helperRun(t, helper, "ops", c, attr), "write EACCES", "write EROFS")
		if user != ops {
			t.Errorf("the ops as %s and as root differ:\n%s", agentName, diffLines(user, ops))
		}
	})
}

// The ordinary user the user-namespace test runs as, the one the exec
// tests make too.
const (
	agentName = "dshfs-agent"
	agentUID  = 23456
)

// agentUser returns the ordinary user's uid, made when the machine has
// none.
func agentUser(t *testing.T) int {
	t.Helper()
	if u, err := user.Lookup(agentName); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		return uid
	}
	out, err := exec.Command("useradd", "--uid", strconv.Itoa(agentUID), "--user-group", "--no-create-home",
		"--home-dir", "/nonexistent", "--shell", "/bin/sh", agentName).CombinedOutput()
	if err != nil {
		t.Skipf("cannot make the ordinary user %s: %v: %s", agentName, err, out)
	}
	return agentUID
}

// TestCompiledMountsChanged: a path swapped after the plan fails the op
// that opens or checks it, in the words applyFiles fails with, naming
// that op, and CMD never runs: a symlink where a hidden folder was, a
// file where a folder was, a file where a socket was, a folder where a
// pinned symlink was, a symlink above one, and one gone.
func TestCompiledMountsChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount (run the tests as root to cover the mount layer)")
	}
	if err := mountAPIWhy(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name, want string
		changed    bool
		swap       func(tmp string) error
	}{
		{"symlink", "mount: hide $ROOT/hidden: changed since the plan: too many levels of symbolic links", true, func(tmp string) error {
			os.Remove(filepath.Join(tmp, "hidden"))
			return os.Symlink("keys", filepath.Join(tmp, "hidden"))
		}},
		{"file for a folder", "mount: hide $ROOT/hidden: changed since the plan", false, func(tmp string) error {
			os.Remove(filepath.Join(tmp, "hidden"))
			return os.WriteFile(filepath.Join(tmp, "hidden"), nil, 0o644)
		}},
		{"file for a socket", "mount: hide socket $ROOT/sock: changed since the plan", false, func(tmp string) error {
			os.Remove(filepath.Join(tmp, "sock"))
			return os.WriteFile(filepath.Join(tmp, "sock"), nil, 0o644)
		}},
		{"folder for a pinned symlink", "mount: pin symlink $ROOT/d/link: changed since the plan", false, func(tmp string) error {
			os.Remove(filepath.Join(tmp, "d", "link"))
			return os.Mkdir(filepath.Join(tmp, "d", "link"), 0o755)
		}},
		{"a pinned symlink reached through a symlink", "mount: pin symlink $ROOT/d/link: changed since the plan: too many levels of symbolic links", true,
			func(tmp string) error {
				os.Rename(filepath.Join(tmp, "d"), filepath.Join(tmp, "d2"))
				return os.Symlink("d2", filepath.Join(tmp, "d"))
			}},
		{"a pinned symlink gone", "mount: pin symlink $ROOT/d/link: no such file or directory", false, func(tmp string) error {
			return os.Remove(filepath.Join(tmp, "d", "link"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := canonTemp(t)
			makeTree(t, tmp, "hidden/", "keys/a", "ws/", "empty", "d/")
			os.Truncate(filepath.Join(tmp, "empty"), 0)
			if err := os.Symlink("../keys", filepath.Join(tmp, "d", "link")); err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("unix", filepath.Join(tmp, "sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			c := opsCase{Files: plan.Files{Hidden: []string{filepath.Join(tmp, "hidden")}, HiddenSockets: []string{filepath.Join(tmp, "sock")},
				PinnedLinks: []string{filepath.Join(tmp, "d", "link")}},
				Empty: filepath.Join(tmp, "empty"), Root: tmp}
			ops, err := CompileFiles(&c.Files, FilesTarget{EmptyFile: c.Empty})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.swap(tmp); err != nil {
				t.Fatal(err)
			}
			out, err := startOps(c, unix.CLONE_NEWNS)
			want := strings.ReplaceAll(tc.want, "$ROOT", tmp)
			var opErr *rawinit.OpError
			if !errors.As(err, &opErr) || err.Error() != want || opErr.Changed != tc.changed || out != "" {
				t.Fatalf("the ops: %v (%s), want %q and no CMD", err, out, want)
			}
			// The op it names is the one that opened or checked the path;
			// the index is that of Spec.Ops, after the test's own first op.
			if words := ops[opErr.Op-1].Words; !strings.HasPrefix(want, words) {
				t.Errorf("op %d's words %q, want those of the failure", opErr.Op, words)
			}
			// applyFiles says the same of the same swap.
			applied, said := helperRunErr(t, "apply", c), want
			if i := strings.Index(want, "changed"); i >= 0 {
				said = want[:i] + "changed since the plan"
			}
			if !strings.Contains(applied, said) {
				t.Errorf("applyFiles said %q", applied)
			}
		})
	}
}

// helperRunErr runs the helper mode with c in a mount namespace of its
// own, to fail: what it says on stderr.
func helperRunErr(t *testing.T, mode string, c opsCase) string {
	t.Helper()
	b, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), opsHelperEnv+"="+mode, opsCaseEnv+"="+string(b), "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper %s succeeded: %s", mode, out)
	}
	return string(out)
}

// TestCompileFilesRefused: a plan the host can tell is wrong is refused
// before anything runs, in applyFiles' words.
func TestCompileFilesRefused(t *testing.T) {
	if err := mountAPIWhy(); err != nil {
		t.Skip(err)
	}
	tmp := canonTemp(t)
	makeTree(t, tmp, "run/s1/record", "full")
	for _, tc := range []struct {
		name  string
		files plan.Files
		empty string
		want  string
	}{
		{"record outside a session folder", plan.Files{Runtime: tmp + "/run", Record: tmp + "/record"}, "",
			"mount: hide " + tmp + "/run: the record " + tmp + "/record is not in a session folder of " + tmp + "/run"},
		{"empty file not empty", plan.Files{HiddenFiles: []string{tmp + "/x"}}, tmp + "/full",
			"mount: open empty file " + tmp + "/full: not an empty regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := CompileFiles(&tc.files, FilesTarget{EmptyFile: tc.empty})
			if ops != nil || err == nil || err.Error() != tc.want || fserr.CodeOf(err) != fserr.IO {
				t.Errorf("CompileFiles = %d ops, %v; want %q", len(ops), err, tc.want)
			}
		})
	}
}

// BenchmarkMountLayer starts a session's first process that makes the
// fixture's mounts and ends: "go child" is a second Go program (this
// binary) that applies them with applyFiles, as an ordinary user's
// session does today; "ops" is a rawinit first process that runs the
// compiled ops, then executes /bin/true. Neither makes a PID namespace.
func BenchmarkMountLayer(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to mount")
	}
	if err := mountAPIWhy(); err != nil {
		b.Skip(err)
	}
	full := opsFixture(b, -1)
	for _, tc := range []struct {
		name string
		c    opsCase
	}{{"empty plan", opsCase{Root: full.Root, Files: plan.Files{}}}, {"fixture", full}} {
		c := tc.c
		js, _ := json.Marshal(c)
		reset := func() {
			if len(c.Files.Overlays) > 0 {
				resetOverlay(b, c, -1) // a volatile overlay's upper folder is not taken twice
			}
		}
		b.Run(tc.name+"/go child", func(b *testing.B) {
			for b.Loop() {
				reset()
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), opsHelperEnv+"=apply-only", opsCaseEnv+"="+string(js), "GORACE=atexit_sleep_ms=0")
				cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
		b.Run(tc.name+"/ops", func(b *testing.B) {
			for b.Loop() {
				reset()
				if out, err := startOpsCmd(c, unix.CLONE_NEWNS, "/bin/true", false); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
