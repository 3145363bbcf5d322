package exec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExecReadOnlyTree* tests (issue 21) check the mount layer's
// read-only view of everything outside the writable roots: Landlock
// governs writes and creations, not chmod, chown, utime, setxattr or the
// inode flags, so without it a session changed the metadata of any file
// it could reach, the trusted config and its own record included. They
// also check that the roots are nodev, that the folders above a
// protected path cannot be renamed away, and that a hard link to a
// deny_read file is hidden like the file.

// metadata is what the shell must not change of a file outside the
// roots: mode, owner, modification time, a user extended attribute and
// the inode flags (chattr).
type metadata struct {
	mode     os.FileMode
	uid, gid uint32
	mtime    int64
	xattr    string
	flags    uint32
}

func metadataOf(t *testing.T, path string) metadata {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	m := metadata{mode: os.FileMode(st.Mode), uid: st.Uid, gid: st.Gid, mtime: st.Mtim.Nano()}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(path, "user.dshfs", buf); err == nil {
		m.xattr = string(buf[:n])
	}
	if f, err := os.Open(path); err == nil {
		m.flags, _ = unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		f.Close()
	}
	return m
}

// metadataScript changes the metadata of each of files in every way a
// shell can, printing "NAME=STATUS" for each attempt; uid is the owner
// chown gives. setfattr and chattr are tried where installed; chattr only
// as root, the only user allowed to set the immutable flag.
func metadataScript(uid int, root bool, files ...string) string {
	var b strings.Builder
	for i, f := range files {
		q := "'" + f + "'"
		fmt.Fprintf(&b, "chmod 0666 %s; echo chmod%d=$?; ", q, i)
		fmt.Fprintf(&b, "chown %d:%d %s; echo chown%d=$?; ", uid, uid, q, i)
		fmt.Fprintf(&b, "touch -d 2001-01-01 %s; echo touch%d=$?; ", q, i)
		if _, err := exec.LookPath("setfattr"); err == nil {
			fmt.Fprintf(&b, "setfattr -n user.dshfs -v planted %s; echo setfattr%d=$?; ", q, i)
		}
		if _, err := exec.LookPath("chattr"); err == nil && root {
			fmt.Fprintf(&b, "chattr +i %s; echo chattr%d=$?; ", q, i)
		}
	}
	return b.String()
}

// wantMetadataRefused checks that every attempt of metadataScript failed
// with "Read-only file system" and that each file is as it was.
func wantMetadataRefused(t *testing.T, out string, before map[string]metadata) {
	t.Helper()
	for _, line := range strings.Fields(out) {
		name, status, ok := strings.Cut(line, "=")
		if ok && strings.TrimRight(name, "0123456789") != name && status == "0" {
			t.Errorf("the shell's %s outside the roots succeeded", name)
		}
	}
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("want EROFS (Read-only file system) in:\n%s", out)
	}
	for path, was := range before {
		if now := metadataOf(t, path); now != was {
			t.Errorf("%s changed: %+v, was %+v", path, now, was)
		}
	}
}

// undoImmutable clears the immutable flag a test run may have set, so
// the test's folders can be removed.
func undoImmutable(paths ...string) {
	for _, p := range paths {
		exec.Command("chattr", "-i", p).Run()
	}
}

// TestExecReadOnlyTree: as root, chmod, chown, touch, setfattr and
// chattr on a file outside the roots, on the trusted config and on the
// session's own record fail with EROFS and change nothing; writes in the
// workspace and to /dev/null still work, and policy says the layer holds.
func TestExecReadOnlyTree(t *testing.T) {
	requireMountLayer(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the session as an ordinary user is TestExecReadOnlyTreeAgent")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	harness.WriteTree(t, ws, map[string]string{"src/a.go": "package a\n"})
	harness.WriteTree(t, outside, map[string]string{"f": "outside\n"})
	f := filepath.Join(outside, "f")
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "mode: workspace-write\n")
	var trusted string
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "DSH_FS_TEST_SYSTEM_DIR="); ok {
			trusted = filepath.Join(dir, "config.yaml")
		}
	}
	t.Cleanup(func() { undoImmutable(f, trusted) })
	before := map[string]metadata{f: metadataOf(t, f), trusted: metadataOf(t, trusted)}
	script := metadataScript(1, true, f, trusted) +
		`chmod 0644 "$DSH_FS_SESSION"; echo chmodrecord=$?; stat -c 'record=%a' "$DSH_FS_SESSION"; ` +
		// The supervisor's root is in the mount namespace outside.
		`sup=$(sed 's/.*"supervisor_pid":\([0-9]*\).*/\1/' "$DSH_FS_SESSION"); chmod 0666 "/proc/$sup/root` + f + `"; echo chmodviasupervisor=$?; ` +
		`echo x > src/b.go; echo "ws=$?"; echo x > /dev/null; echo "null=$?"; dsh-fs policy --verbose`
	code, out, errs := execSh(t, env, ws, fenced(ws), script)
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s%s", code, out, errs)
	}
	wantMetadataRefused(t, out+errs, before)
	for _, want := range []string{"record=400", "ws=0", "null=0", `"outside_read_only_held":true`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s%s", want, out, errs)
		}
	}

	// Outside a session nothing holds, and policy says what exec would do.
	_, _, out, errs = harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "policy", "--verbose", "--cwd", ws), nil)
	for _, want := range []string{`"outside_read_only_held":false`, "dsh-fs exec would make everything outside the writable roots read-only here"} {
		if !strings.Contains(out, want) {
			t.Errorf("policy outside a session: want %q in:\n%s%s", want, out, errs)
		}
	}
}

// TestExecReadOnlyTreeAgent is TestExecReadOnlyTree for a real ordinary
// user, whose session runs in a user namespace: it may change the
// metadata of its own files outside the roots without exec, and not with.
func TestExecReadOnlyTreeAgent(t *testing.T) {
	requireMountLayer(t)
	uid := agentUser(t)
	if n, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err != nil || strings.TrimSpace(string(n)) == "0" {
		t.Skip("this kernel allows no unprivileged user namespace: the mount layer needs root here")
	}
	a := newAgentWorkspace(t, map[string]string{"ws/src/a.go": "package a\n", "outside/f": "outside\n"})
	f := filepath.Join(a.dir, "outside", "f")
	before := map[string]metadata{f: metadataOf(t, f)}
	out, err := a.exec(metadataScript(uid, false, f) + `echo x > src/b.go; echo "ws=$?"; echo x > /dev/null; echo "null=$?"`)
	if err != nil {
		t.Fatalf("exec as %s: %v\n%s", agentUserName, err, out)
	}
	wantMetadataRefused(t, out, before)
	for _, want := range []string{"ws=0", "null=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}

	// The control: the same user, without exec, changes its own file.
	c := exec.Command("sh", "-c", "chmod 0666 '"+f+"'")
	asAgent(t, c)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("without exec, chmod of the user's own file: %v\n%s", err, out)
	}
	if m := metadataOf(t, f); m.mode.Perm() != 0o666 {
		t.Errorf("without exec the chmod should get through: mode %v", m.mode)
	}
}

// agentWorkspace is a session of the real ordinary user (agentUser): this
// test binary as its dsh-fs (harness.UnprivilegedBin), a folder dir holding the
// files given (the workspace is dir/ws), all owned by that user, and the
// folder of its trusted system config (system).
type agentWorkspace struct {
	t            *testing.T
	bin, dir, ws string
	system       string
}

func newAgentWorkspace(t *testing.T, files map[string]string) agentWorkspace {
	t.Helper()
	agentUser(t)
	if n, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err != nil || strings.TrimSpace(string(n)) == "0" {
		t.Skip("this kernel allows no unprivileged user namespace: the mount layer needs root here")
	}
	bin, dir := harness.UnprivilegedBin(t)
	a := agentWorkspace{t: t, bin: bin, dir: dir, ws: filepath.Join(dir, "ws"), system: filepath.Join(dir, "etc")}
	harness.WriteTree(t, dir, files)
	os.MkdirAll(a.ws, 0o755)
	for _, e := range harness.DirNames(t, dir) {
		if e != "bin" {
			chownTree(t, filepath.Join(dir, e))
		}
	}
	os.MkdirAll(a.system, 0o755)
	return a
}

// exec runs `dsh-fs exec --cwd WS --tmp=false -- sh -c script` in the
// workspace as the ordinary user.
func (a agentWorkspace) exec(script string) (string, error) {
	c := exec.Command(a.bin, "exec", "--cwd", a.ws, "--tmp=false", "--", "sh", "-c", script)
	c.Dir = a.ws
	c.Env = agentExecEnv(a.t, a.bin, a.system)
	asAgent(a.t, c)
	out, err := c.CombinedOutput()
	return string(out), err
}

// TestExecNodev: as root, a device node in the workspace made before the
// session (a copy of /dev/null, and of the disk that holds /) cannot be
// used inside, nor one made inside: the roots are mounted nodev.
func TestExecNodev(t *testing.T) {
	requireMountLayer(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to make device nodes")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	var root unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(filepath.Join(ws, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	disk := int(root.Dev)
	if _, err := os.Stat(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(root.Dev), unix.Minor(root.Dev))); err != nil {
		disk = -1 // / is not on a block device (overlay, tmpfs)
	}
	if disk >= 0 {
		if err := unix.Mknod(filepath.Join(ws, "disk"), unix.S_IFBLK|0o600, disk); err != nil {
			t.Fatal(err)
		}
	}
	env := execEnv(t, ws)
	script := `echo x > null; echo "chr=$?"; head -c 16 disk > /dev/null; echo "blk=$?"; ` +
		fmt.Sprintf(`mknod new b %d %d && head -c 16 new > /dev/null; echo "new=$?"`, unix.Major(root.Dev), unix.Minor(root.Dev))
	_, out, errs := execSh(t, env, ws, fenced(ws), script)
	for _, want := range []string{"chr=", "new="} {
		if strings.Contains(out, want+"0") || !strings.Contains(out, want) {
			t.Errorf("want %s failing in:\n%s%s", want, out, errs)
		}
	}
	if disk >= 0 && (strings.Contains(out, "blk=0") || !strings.Contains(out, "blk=")) {
		t.Errorf("the shell read the disk through a node in the workspace:\n%s%s", out, errs)
	}
}

// TestExecPinnedGit: the folders from a writable root down to a
// protected .git are mount points, which the kernel refuses to rename or
// remove, so a renamed parent cannot leave a planted .git in its place;
// the same for a workspace beneath the /tmp root, renamed from above.
func TestExecPinnedGit(t *testing.T) {
	requireMountLayer(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	harness.WriteTree(t, ws, map[string]string{
		"sub/.git/HEAD": "ref: refs/heads/main\n", "sub/.git/config": "[core]\n", "sub/code.go": "package sub\n",
	})
	env := execEnv(t, ws)
	script := `mv sub sub2; echo "mv=$?"; mkdir -p sub/.git; echo '[core] fsmonitor = touch /tmp/pwned' > sub/.git/config; echo "plant=$?"; ` +
		`rm -rf sub; echo "rm=$?"`
	_, out, errs := execSh(t, env, ws, fenced(ws), script)
	for _, want := range []string{"mv=1", "rm=1", "Device or resource busy"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("want %q in:\n%s%s", want, out, errs)
		}
	}
	if strings.Contains(out, "plant=0") {
		t.Errorf("a .git was planted:\n%s%s", out, errs)
	}
	// rm -rf removes what is not protected; the folders stay.
	wantContent(t, filepath.Join(ws, "sub/.git/config"), "[core]\n")
	wantAbsent(t, filepath.Join(ws, "sub2"))

	// With /tmp a writable root, the workspace's own parent folders
	// inside it are pinned too.
	_, out, errs = execSh(t, env, ws, []string{"--cwd", ws, "--tmp=true"},
		`mv '`+base+`' '`+base+`.moved'; echo "mvparent=$?"`)
	if !strings.Contains(out, "mvparent=1") {
		t.Errorf("renaming the workspace's parent in /tmp: want mvparent=1 in:\n%s%s", out, errs)
	}
	wantAbsent(t, base+".moved")

	// The same for a real ordinary user, in its user namespace.
	a := newAgentWorkspace(t, map[string]string{"ws/sub/.git/HEAD": "ref: refs/heads/main\n", "ws/sub/.git/config": "[core]\n"})
	out, err := a.exec(script)
	if err != nil || !strings.Contains(out, "mv=1") || !strings.Contains(out, "Device or resource busy") || strings.Contains(out, "plant=0") {
		t.Errorf("as %s: %v\n%s", agentUserName, err, out)
	}
	wantContent(t, filepath.Join(a.ws, "sub/.git/config"), "[core]\n")
}

// TestExecDenyHardLink: a hard link in the workspace, made before the
// session, to a deny_read file outside (an anchored glob) or inside (a
// relative one) shows nothing of the secret to the shell, and the file
// tool inside refuses it as it does outside.
func TestExecDenyHardLink(t *testing.T) {
	requireMountLayer(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	harness.WriteTree(t, base, map[string]string{"secrets/key": "SECRET-KEY\n", "ws/.env": "SECRET-ENV\n", "ws/a.go": "package a\n"})
	for old, link := range map[string]string{"secrets/key": "ws/notes.txt", "ws/.env": "ws/env.txt"} {
		if err := os.Link(filepath.Join(base, old), filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "deny_read: ["+filepath.Join(base, "secrets")+"/**, .env]\n")
	code, _, out, errs := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "read", "--cwd", ws, "notes.txt"), nil)
	if code != 3 || !strings.Contains(out, `"code":"FS_SANDBOX_DENIED"`) {
		t.Fatalf("outside a session, read of the link: exit %d\n%s%s", code, out, errs)
	}
	_, out, errs = execSh(t, env, ws, fenced(ws),
		`cat notes.txt env.txt; echo "cat=$?"; dsh-fs read notes.txt; echo "read=$?"; cat a.go`)
	if strings.Contains(out+errs, "SECRET") {
		t.Errorf("the session read the secret through a hard link:\n%s%s", out, errs)
	}
	for _, want := range []string{"cat=0", `"code":"FS_SANDBOX_DENIED"`, `"reason":"deny_read"`, "read=3", "package a"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s%s", want, out, errs)
		}
	}

	// A link outside every root walked is not hidden (a documented gap),
	// but the file tool inside refuses it by the identities the record
	// carries: the original is hidden, and no walk inside can find it.
	if err := os.Link(filepath.Join(base, "secrets/key"), filepath.Join(base, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	_, out, errs = execSh(t, env, ws, fenced(ws), `dsh-fs read ../elsewhere; echo "read=$?"`)
	if !strings.Contains(out, `"reason":"deny_read"`) || !strings.Contains(out, "read=3") || strings.Contains(out, "SECRET") {
		t.Errorf("dsh-fs read of a link outside the roots inside the session:\n%s%s", out, errs)
	}

	// The shell of a real ordinary user sees nothing of it either.
	a := newAgentWorkspace(t, map[string]string{"secrets/key": "SECRET-KEY\n", "ws/a.go": "package a\n"})
	harness.WriteTree(t, a.system, map[string]string{"config.yaml": "deny_read: [" + filepath.Join(a.dir, "secrets") + "/**]\n"})
	if err := os.Link(filepath.Join(a.dir, "secrets/key"), filepath.Join(a.ws, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	out, err := a.exec(`cat notes.txt; echo "cat=$?"`)
	if err != nil || strings.Contains(out, "SECRET") || !strings.Contains(out, "cat=0") {
		t.Errorf("as %s: %v\n%s", agentUserName, err, out)
	}
}

// TestExecReadOnlyTreeTerminal: under the read-only tree the devices a
// shell needs outside the roots still take writes: its controlling
// terminal (/dev/tty, and the descriptor it was given: the session's
// terminal has no name in the session's own /dev/pts, design.md §10),
// and a pseudo-terminal it opens itself, as script(1) or an editor does.
// The kernel checks a mount's read-only flag for regular files, folders
// and symlinks only.
func TestExecReadOnlyTreeTerminal(t *testing.T) {
	requireMountLayer(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) here to open a pseudo-terminal inside the session")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside := filepath.Join(t.TempDir(), "f")
	harness.WriteTree(t, filepath.Dir(outside), map[string]string{"f": "outside\n"})
	env := execEnv(t, ws, "OUTSIDE="+outside)
	r := runUnderTTY(t, env, ws, "", "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c",
		`echo on-the-terminal > /dev/tty; echo "tty=$?"; echo on-pts >&0; echo "pts=$?"; `+
			`script -qc 'echo inside-script' /dev/null; echo "script=$?"; chmod 0666 "$OUTSIDE"; echo "chmod=$?"`)
	for _, want := range []string{"tty=0", "pts=0", "script=0", "chmod=1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("want %q in the output:\n%s\nthe terminal showed:\n%s", want, r.stdout, r.screen)
		}
	}
	for _, want := range []string{"on-the-terminal", "on-pts"} {
		if !strings.Contains(r.screen, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, r.screen)
		}
	}
}
