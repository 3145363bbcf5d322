//go:build unix

package exec

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agentUser is the ordinary user the session tests run as: a real entry
// in /etc/passwd with a uid of its own. uid 65534 (harness.Nobody) alone would
// hide mapping bugs: it is the kernel's overflow uid, the owner every
// unmapped file shows inside a user namespace.
const (
	agentUserName = "dshfs-agent"
	agentUID      = 23456
)

var agentUserOnce = sync.OnceValues(func() (int, error) {
	if u, err := user.Lookup(agentUserName); err == nil {
		return strconv.Atoi(u.Uid)
	}
	var out []byte
	var err error
	// useradd takes /etc/.pwd.lock: another test process may hold it.
	for try := 0; try < 20; try++ {
		c := exec.Command("useradd", "--uid", strconv.Itoa(agentUID), "--user-group",
			"--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh", agentUserName)
		if out, err = c.CombinedOutput(); err == nil {
			break
		}
		if u, lerr := user.Lookup(agentUserName); lerr == nil {
			return strconv.Atoi(u.Uid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return 0, errors.New("useradd: " + strings.TrimSpace(string(out)) + ": " + err.Error())
	}
	return agentUID, nil
})

// agentUser returns the uid (and gid, the same) of the ordinary user
// the test runs sessions as, creating it when the machine lacks it. It
// skips the test where that cannot be done (not root, no useradd).
func agentUser(t testing.TB) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create and run as an ordinary user")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd here to create an ordinary user")
	}
	uid, err := agentUserOnce()
	if err != nil {
		t.Skipf("cannot create the ordinary user %s: %v", agentUserName, err)
	}
	return uid
}

// asAgent makes c run as the ordinary user of agentUser, with that
// user's own group and no supplementary groups.
func asAgent(t testing.TB, c *exec.Cmd) {
	t.Helper()
	uid := agentUser(t)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
}

// agentRuntimeDir returns the ordinary user's runtime folder,
// /run/user/UID, as pam_systemd makes it (0700, owned by the user),
// made for the test when the machine has none.
func agentRuntimeDir(t testing.TB) string {
	t.Helper()
	uid := agentUser(t)
	dir := filepath.Join("/run/user", strconv.Itoa(uid))
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Skipf("cannot make %s: %v", dir, err)
		}
	}
	os.Chmod(dir, 0o700)
	os.Chown(dir, uid, uid)
	return dir
}

// chownTree gives dir and everything beneath it to the ordinary user,
// and lets that user pass through the folders above dir that the test
// made private (t.TempDir's are 0700).
func chownTree(t testing.TB, dir string) {
	t.Helper()
	uid := agentUser(t)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	for d := filepath.Dir(dir); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o011 != 0o011 {
			os.Chmod(d, fi.Mode().Perm()|0o011)
		}
	}
}

func TestAgentUserIsOrdinary(t *testing.T) {
	uid := agentUser(t)
	if uid == 0 || uid == 65534 {
		t.Fatalf("the agent user has uid %d: neither root nor the overflow uid will do", uid)
	}
	c := exec.Command("id", "-u")
	asAgent(t, c)
	out, err := c.Output()
	if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(uid) {
		t.Fatalf("id -u as %s: %q, %v", agentUserName, out, err)
	}
}

// agentExecEnv is the environment of a dsh-fs exec session of the
// ordinary user: bin's folder first on $PATH, the user's runtime folder,
// system as the folder of the trusted system config, and no trusted
// user config unless extra names one (DSH_FS_TEST_HOME=…). extra is
// appended; a variable given again there wins, as os/exec keeps the last.
func agentExecEnv(t testing.TB, bin, system string, extra ...string) []string {
	return append([]string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "XDG_RUNTIME_DIR=" + agentRuntimeDir(t),
		"DSH_FS_TEST_SYSTEM_DIR=" + system, "DSH_FS_TEST_HOME=/nonexistent", "GORACE=atexit_sleep_ms=0"}, extra...)
}
