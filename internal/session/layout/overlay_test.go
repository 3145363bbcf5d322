//go:build unix

package layout

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// removeTreeChild is the variable that makes this test binary a child
// that removes the folder it names and exits: RemoveTree as an ordinary
// user, whom a folder's missing bits stop, unlike root.
const removeTreeChild = "DSH_FS_TEST_REMOVE_TREE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(removeTreeChild); dir != "" {
		if err := RemoveTree(dir); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRemoveTreeUnprivileged: as an ordinary user (uid 23999, no
// capability), RemoveTree removes a session's folder whose module cache
// folders are 0555 and whose overlay work folder is 0, by giving each
// its owner's bits through its own descriptor; a symlink in it to a
// folder of the same user's outside is removed as a link, its target's
// mode and contents left as they were.
func TestRemoveTreeUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as another uid")
	}
	const uid = 23999
	top := t.TempDir()
	os.Chmod(top, 0o755)
	os.Chmod(filepath.Dir(top), 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(top, "sandbox.test")
	copyFile(t, self, bin, 0o755)
	dir, outside := filepath.Join(top, "session"), filepath.Join(top, "outside")
	for _, d := range []string{"caches/0/upper/mod/x@v1/sub", "caches/0/work/work", "caches/1/upper"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "keep"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "caches/0/upper/mod/x@v1/sub/f.go"), nil, 0o444)
	os.Symlink(outside, filepath.Join(dir, "caches/1/upper/link"))
	filepath.Walk(top, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	os.Chmod(outside, 0o500)
	for _, d := range []string{"caches/0/upper/mod/x@v1/sub", "caches/0/upper/mod/x@v1"} {
		os.Chmod(filepath.Join(dir, d), 0o555)
	}
	os.Chmod(filepath.Join(dir, "caches/0/work/work"), 0)

	c := exec.Command(bin, "-test.run=^$")
	c.Env = []string{removeTreeChild + "=" + dir}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("RemoveTree as uid %d: %v\n%s", uid, err, out)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", dir, err)
	}
	st, err := os.Stat(outside)
	if err != nil || st.Mode().Perm() != 0o500 {
		t.Errorf("the symlink's target changed: %v %v", st.Mode(), err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "keep\n" {
		t.Errorf("the symlink's target lost its file: %q %v", b, err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveTree: a session's folder goes whole, read-only folders (a
// module cache's) and an overlay's mode-0 work folder included.
func TestRemoveTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	for _, d := range []string{"caches/0/upper/mod/x@v1/sub", "caches/0/work/work"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "caches/0/upper/mod/x@v1/sub/f.go"), nil, 0o444)
	os.Chmod(filepath.Join(dir, "caches/0/upper/mod/x@v1/sub"), 0o555)
	os.Chmod(filepath.Join(dir, "caches/0/upper/mod/x@v1"), 0o555)
	os.Chmod(filepath.Join(dir, "caches/0/work/work"), 0)
	os.Symlink("/etc", filepath.Join(dir, "caches/0/upper/etc"))
	if err := RemoveTree(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", dir, err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("the symlink's target went too: %v", err)
	}
	// A folder already gone (a clean-up that ran before) is no error.
	if err := RemoveTree(dir); err != nil {
		t.Errorf("RemoveTree of a folder that is gone: %v", err)
	}
	if err := RemoveTree(filepath.Join(dir, "below")); err != nil {
		t.Errorf("RemoveTree beneath a folder that is gone: %v", err)
	}
}
