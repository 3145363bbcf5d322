package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The plan these tests apply is the host's, made by internal/sandbox
// from a policy over a real tree: the test binary imports the planner,
// the child package never does (e2e/repo's TestChildKnowsNoPolicy lists
// what the package, not its tests, depends on).

// makeTree builds a layout under dir in os.Root's notation: "d/" a folder,
// "f" a file (its content its name), "a => t" a symlink to t.
func makeTree(t testing.TB, dir string, layout ...string) {
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
func canonTemp(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mountsTree is the layout of the mount tests (sandbox's mount tests
// share it): a workspace "ws" with protected paths, a git directory by
// content only, a .git symlink pointing out, a protected name that is a
// symlink (.codex), deny_read files, and a secret folder outside it.
var mountsTree = []string{
	"ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/", "ws/.git/config", "ws/.git/hooks/inner/",
	"ws/sub/.git/HEAD", "ws/sub/code.go",
	"ws/.vscode/settings.json",
	"ws/.mcp.json",
	"ws/src/.bashrc", "ws/src/main.go",
	"ws/other/.git => ../../outside",
	"ws/.codex => decoy-codex", "ws/decoy-codex/",
	"ws/vendor/lib.git/HEAD", "ws/vendor/lib.git/objects/", "ws/vendor/lib.git/refs/",
	"ws/.env", "ws/app/.env", "ws/app/env.go",
	"ws/dsh-fs.yaml",
	"outside/HEAD",
	"secret/key",
	"keys/a.pem", "keys/b.txt",
}

func planJSON(f plan.Files) string {
	b, _ := json.Marshal(f)
	return string(b)
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
	planned := layout.PlanMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	if err := layout.MakePlaceholders(&planned); err != nil {
		t.Fatal(err)
	}
	files := planned.Files
	if !files.OutsideReadOnly {
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
			childInMountNamespace(t, "TestMountApplyChild", "MOUNTS_CHILD="+mode, "MOUNTS_PLAN="+planJSON(files),
				"MOUNTS_EMPTY="+empty, "MOUNTS_WS="+ws, "MOUNTS_SECRET="+tmp+"/secret", "MOUNTS_EXTRA="+tmp+"/extra")
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

// childInMountNamespace runs the test child of this binary in a mount
// namespace of its own, env added to its environment, and fails t
// unless it passed.
func childInMountNamespace(t *testing.T, child string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v")
	// GORACE: a race-enabled child would otherwise sleep 1 s at exit.
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestMountApplyChild is TestMountApply's child, run in its own mount
// namespace; it does nothing elsewhere.
func TestMountApplyChild(t *testing.T) {
	mode := os.Getenv("MOUNTS_CHILD")
	if mode == "" {
		t.Skip("run by TestMountApply in a mount namespace of its own")
	}
	var files plan.Files
	if err := json.Unmarshal([]byte(os.Getenv("MOUNTS_PLAN")), &files); err != nil {
		t.Fatal(err)
	}
	ws, secret := os.Getenv("MOUNTS_WS"), os.Getenv("MOUNTS_SECRET")
	if mode != "apply" {
		// Without mount_setattr (classic) the supervisor plans no
		// read-only tree; swap tests the binds after it.
		files.OutsideReadOnly = false
	}
	if mode == "swap" {
		applySwapped(t, files, ws)
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
		a := applier{classic: mode == "classic", writableExtra: []string{os.Getenv("MOUNTS_EXTRA")}}
		if a.classic {
			refuseNewMountAPI(t)
		}
		if err := a.applyFiles(&files, os.Getenv("MOUNTS_EMPTY")); err != nil {
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
	if files.OutsideReadOnly {
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
func applySwapped(t *testing.T, files plan.Files, ws string) {
	dotgit := filepath.Join(ws, ".git")
	err := (applier{}).applyFiles(&files, filepath.Join(dotgit, "HEAD"))
	if err == nil || !strings.Contains(err.Error(), "not an empty regular file") {
		t.Errorf("applyFiles with a non-empty file to bind over secrets = %v", err)
	}
	if fails := probeMounts(ws, os.Getenv("MOUNTS_SECRET")); len(fails) != len(mountProbes) {
		t.Errorf("a failed applyFiles mounted: %v", heldProbes(fails))
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
	err = (applier{}).applyFiles(&files, os.Getenv("MOUNTS_EMPTY"))
	if err == nil || !strings.Contains(err.Error(), dotgit) {
		t.Errorf("Apply with %s swapped for a symlink = %v, want an error naming it", dotgit, err)
	}
	// A folder to pin, or a writable root, swapped for a symlink fails
	// the same way, before anything is mounted on where it leads.
	// A symlink to pin that is a folder now, or is reached through a
	// symlink, fails too.
	for _, bad := range []plan.Files{{Pinned: []string{dotgit}}, {OutsideReadOnly: true, Writable: []string{dotgit}},
		{PinnedLinks: []string{dotgit + ".moved"}}, {PinnedLinks: []string{filepath.Join(dotgit, "HEAD")}}} {
		if err := (applier{}).applyFiles(&bad, ""); err == nil || !strings.Contains(err.Error(), dotgit) {
			t.Errorf("Apply(%s) = %v, want an error naming %s", planJSON(bad), err, dotgit)
		}
	}
	// Without mount_setattr there is no read-only tree to make.
	err = (applier{classic: true}).applyFiles(&plan.Files{OutsideReadOnly: true}, "")
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
	"secret lists empty", "secret read-only", "ws/.env reads empty", "ws/.git pinned", "ws/sub/.git pinned",
	"ws/.codex pinned"}

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
	// A protected name's symlink removed would let a folder of the
	// session's take its place.
	codex := filepath.Join(ws, ".codex")
	if err := os.Remove(codex); !errors.Is(err, unix.EBUSY) {
		fail(8, "remove: %v, want EBUSY", err)
		if err == nil {
			os.Symlink("decoy-codex", codex)
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

// TestHideSockets applies a plan's hidden sockets in a child with its
// own mount namespace, with each way of mounting, and without (control):
// a hidden socket refuses connections, stays in place (it cannot be
// removed or renamed away from its cover), and the parent sees nothing.
// A socket gone since the plan is skipped; one swapped for a symlink
// fails Apply.
func TestHideSockets(t *testing.T) {
	if os.Getenv("SOCKETS_CHILD") != "" {
		t.Skip("in the child")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount (run the tests as root to cover the mount layer)")
	}
	tmp := canonTemp(t)
	hidden, kept := filepath.Join(tmp, "run", "hidden.sock"), filepath.Join(tmp, "run", "kept.sock")
	os.MkdirAll(filepath.Dir(hidden), 0o755)
	for _, s := range []string{hidden, kept} {
		l, err := net.Listen("unix", s)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.WriteFile(empty, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	files := plan.Files{ReadOnly: []string{}, Hidden: []string{}, HiddenFiles: []string{}, HiddenSockets: []string{filepath.Join(tmp, "run", "gone.sock"), hidden}}
	for _, mode := range []string{"apply", "classic", "control", "swap"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHideSocketsChild$", "-test.v")
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "SOCKETS_CHILD="+mode, "SOCKETS_PLAN="+planJSON(files),
				"SOCKETS_EMPTY="+empty, "SOCKETS_HIDDEN="+hidden, "SOCKETS_KEPT="+kept)
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestHideSocketsChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if c, err := net.Dial("unix", hidden); err != nil {
				t.Errorf("after the child, in the parent, the socket is hidden: %v", err)
			} else {
				c.Close()
			}
		})
	}
}

// TestHideSocketsChild is TestHideSockets' child, in a mount namespace
// of its own.
func TestHideSocketsChild(t *testing.T) {
	mode := os.Getenv("SOCKETS_CHILD")
	if mode == "" || strings.HasPrefix(mode, "/") {
		t.Skip("run by TestHideSockets in a mount namespace of its own")
	}
	var files plan.Files
	if err := json.Unmarshal([]byte(os.Getenv("SOCKETS_PLAN")), &files); err != nil {
		t.Fatal(err)
	}
	hidden, kept := os.Getenv("SOCKETS_HIDDEN"), os.Getenv("SOCKETS_KEPT")
	if mode == "swap" {
		os.Rename(hidden, hidden+".moved")
		defer os.Rename(hidden+".moved", hidden)
		os.Symlink(kept, hidden)
		defer os.Remove(hidden)
		err := (applier{}).applyFiles(&files, os.Getenv("SOCKETS_EMPTY"))
		if err == nil || !strings.Contains(err.Error(), hidden) {
			t.Errorf("Apply with %s swapped for a symlink = %v, want an error naming it", hidden, err)
		}
		if c, err := net.Dial("unix", kept); err != nil {
			t.Errorf("the symlink's target was covered: %v", err)
		} else {
			c.Close()
		}
		// Swapped for a file: no longer what the plan says either.
		os.Remove(hidden)
		os.WriteFile(hidden, nil, 0o644)
		if err := (applier{}).applyFiles(&files, os.Getenv("SOCKETS_EMPTY")); err == nil || !strings.Contains(err.Error(), "changed since the plan") {
			t.Errorf("Apply with %s swapped for a file = %v, want changed since the plan", hidden, err)
		}
		return
	}
	if mode != "control" {
		a := applier{classic: mode == "classic"}
		if a.classic {
			refuseNewMountAPI(t)
		}
		if err := a.applyFiles(&files, os.Getenv("SOCKETS_EMPTY")); err != nil {
			t.Fatal(err)
		}
	}
	c, err := net.Dial("unix", hidden)
	if c != nil {
		c.Close()
	}
	if held := errors.Is(err, syscall.ECONNREFUSED); held != (mode != "control") {
		t.Errorf("connect to the hidden socket: %v (mode %s)", err, mode)
	}
	if mode != "control" {
		if err := os.Remove(hidden); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("remove the hidden socket: %v, want EBUSY", err)
		}
		if err := os.Rename(hidden, hidden+".x"); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("rename the hidden socket: %v, want EBUSY", err)
		}
	}
	if c, err := net.Dial("unix", kept); err != nil {
		t.Errorf("a socket the plan does not name: %v", err)
	} else {
		c.Close()
	}
}

// refuseNewMountAPI makes every thread of this process get EPERM from the
// mount API of Linux 5.12 (open_tree, move_mount, mount_setattr, fsopen,
// fsconfig, fsmount), with a seccomp filter: an applier told to use
// mount(2) only (classic) must then still apply the plan, and one that
// does not heed it fails, as the fallbacks are taken on ENOSYS only. It
// is for a child process that ends with its test.
func refuseNewMountAPI(t *testing.T) {
	t.Helper()
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		t.Logf("no seccomp filter for %s here: that the classic mount path is taken is not checked", runtime.GOARCH)
		return
	}
	calls := []uint32{unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_MOUNT_SETATTR, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT}
	n := uint8(len(calls))
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}, // arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: arch, Jt: 0, Jf: n + 1},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // nr
	}
	for i, nr := range calls {
		prog = append(prog, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: n - uint8(i), Jf: 0})
	}
	prog = append(prog,
		unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)})
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		t.Fatalf("seccomp: %v", errno)
	}
	if _, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC); !errors.Is(err, unix.EPERM) {
		t.Fatalf("control: fsopen under the filter = %v, want EPERM", err)
	}
}
