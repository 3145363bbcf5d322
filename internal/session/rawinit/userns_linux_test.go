package rawinit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// userHelper is the name this test binary answers to as the helper of
// TestUserNamespace (TestMain): a program an ordinary user runs.
const userHelper = "rawinit-userns"

// The ordinary user TestUserNamespace runs its helper as, the one the
// exec tests make too: a uid of its own, not the kernel's overflow uid.
const (
	agentName = "dshfs-agent"
	agentUID  = 23456
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case userHelper:
		os.Exit(runUserHelper())
	case pendingHelper:
		os.Exit(runPendingHelper())
	}
	os.Exit(m.Run())
}

// runUserHelper starts `id -u; id -g` in new user, mount, network and PID
// namespaces, with its /proc, as the ordinary user it is run as, and
// exits with its status; a failure of Start is said on stderr, 125.
func runUserHelper() int {
	p, err := Start(Spec{Clone: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET, Init: true, MountProc: true,
		Path: "/bin/sh", Argv: []string{"sh", "-c", "id -u; id -g"}, Ctty: -1, Files: []int{0, 1, 2}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	status, ended, err := p.Wait()
	if err != nil || !ended {
		fmt.Fprintln(os.Stderr, "wait:", err, ended)
		return 125
	}
	return status
}

// agent returns the ordinary user's uid, made when the machine has none.
func agent(t *testing.T) int {
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

// TestUserNamespace: an ordinary user, who may not unshare a user
// namespace from a thread of a Go program, starts a session in new
// user, mount, network and PID namespaces: its maps are written before
// the child goes on, and CMD sees the user's own uid and gid.
func TestUserNamespace(t *testing.T) {
	needRoot(t)
	uid := agent(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for d := dir; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	helper := filepath.Join(dir, userHelper)
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, b, 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(helper)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(stderr.String(), "user namespace") {
		t.Skipf("this machine refuses an ordinary user a user namespace: %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("the helper: %v\n%s", err, stderr.String())
	}
	if want := fmt.Sprintf("%d\n%d\n", uid, uid); string(out) != want {
		t.Errorf("CMD's uid and gid: %q, want %q", out, want)
	}
}
