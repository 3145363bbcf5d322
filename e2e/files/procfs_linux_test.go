package files

// Issue 22: nothing is decided on a name alone. With /proc replaced by a
// tmpfs, where a process could lay out symlinks that say what it likes,
// the fence cannot read back what it opened: a write is refused (FS_IO,
// saying why), never decided on the name that was checked.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

func TestProcUnverifiedRefusesWrites(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a mount namespace")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount command")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteTree(t, ws, map[string]string{"sub/keep.txt": "k\n"})
	env := harness.Env(t, ws)
	target := filepath.Join(ws, "sub", "x.txt")
	// The fake /proc lies: its self/fd/N all lead to the workspace
	// folder the write is checked against.
	// The process's own /proc/PID stays (the Go runtime of the binary
	// reads its task list there); /proc itself is the tmpfs.
	script := `mount --bind /proc "$RP" && mount -t tmpfs fake /proc && mkdir -p /proc/$$ && mount --bind "$RP/$$" /proc/$$ && ` +
		`mkdir -p /proc/self/fd /proc/thread-self/fd && ` +
		`for n in 0 1 2 3 4 5 6 7 8 9 10 11 12; do ln -s "$WS/sub" /proc/self/fd/$n; ln -s "$WS/sub" /proc/thread-self/fd/$n; done && ` +
		`exec "$BIN" write "$TARGET" --content x`
	c := exec.Command("sh", "-c", script)
	rp := t.TempDir()
	c.Env = append(env, "RP="+rp, "WS="+ws, "BIN="+harness.Bin(t), "TARGET="+target)
	c.Dir = ws
	c.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := c.CombinedOutput()
	if _, serr := os.Lstat(target); serr == nil {
		t.Fatalf("written with /proc a tmpfs: %v\n%s", err, out)
	}
	if err == nil || !strings.Contains(string(out), "FS_IO") || !strings.Contains(string(out), "not a procfs") {
		t.Errorf("want FS_IO saying /proc is not a procfs: %v\n%s", err, out)
	}
}
