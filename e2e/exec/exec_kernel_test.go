//go:build unix

package exec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// Issue 37: what the kernel shares between a session and the rest of
// the person's processes, past files and sockets: the keyrings, and
// io_uring, whose operations (files, sockets) skip the system calls the
// other layers watch.

// kernelSession is a socket session (root or the ordinary user) with
// uring-probe beside its dsh-fs.
func kernelSession(t *testing.T, agent bool) *socketSession {
	t.Helper()
	s := newSocketSession(t, agent)
	if agent {
		if err := os.Link(s.bin, filepath.Join(filepath.Dir(s.bin), "uring-probe")); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func forEachKernelUser(t *testing.T, test func(t *testing.T, s *socketSession)) {
	t.Run("root", func(t *testing.T) { test(t, kernelSession(t, false)) })
	t.Run("user", func(t *testing.T) { test(t, kernelSession(t, true)) })
}

// TestExecKeyringIsTheSessions: exec is started in a session keyring
// holding a secret, and the person's user keyring holds another; the
// shell reaches neither: not by `keyctl show @s`, nor by searching and
// printing either key (the user keyring's readable by its uid, as a
// helper that shares tokens between the person's sessions leaves it). Outside exec, the same commands print both (the
// control: the keys are there, and keyctl works).
func TestExecKeyringIsTheSessions(t *testing.T) {
	if _, err := exec.LookPath("keyctl"); err != nil {
		t.Skip("no keyctl here (Debian's keyutils): it is the keyring client of this test")
	}
	forEachKernelUser(t, func(t *testing.T, s *socketSession) {
		inside := `keyctl show @s; keyctl print "$(keyctl search @s user dshfs-session-key)"; keyctl print "$(keyctl search @u user dshfs-user-key)"; keyctl request user dshfs-session-key; true`
		script := fmt.Sprintf(`keyctl add user dshfs-session-key session-secret-37 @s >/dev/null || echo "no session key"
id=$(keyctl add user dshfs-user-key user-secret-37 @s) && keyctl setperm "$id" 0x3f3f0000 && keyctl link "$id" @u && keyctl unlink "$id" @s >/dev/null || echo "no user key"
%s
echo ---
exec dsh-fs exec --cwd %s -- sh -c '%s'`, inside, s.ws, inside)
		c := s.command(t, nil, "keyctl", "session", "-", "sh", "-c", script)
		out, _ := c.CombinedOutput()
		t.Cleanup(func() {
			u := s.command(t, nil, "sh", "-c", "keyctl unlink \"$(keyctl search @u user dshfs-user-key)\" @u")
			u.Run()
		})
		before, after, ok := strings.Cut(string(out), "---\n")
		if !ok || !strings.Contains(before, "session-secret-37") || !strings.Contains(before, "user-secret-37") {
			t.Fatalf("outside exec, keyctl did not print both keys (the control):\n%s", out)
		}
		for _, secret := range []string{"session-secret-37", "user-secret-37"} {
			if strings.Contains(after, secret) {
				t.Errorf("the shell read %s from the person's keyrings:\n%s", secret, after)
			}
		}
	})
}

// TestExecIoUringRefused: a session cannot make an io_uring, whose
// socket and file operations bypass socket(2), connect(2) and open(2),
// unless the trusted allow_io_uring says so; a session's own config
// cannot turn it on. Outside exec, the same program makes one (the
// control).
func TestExecIoUringRefused(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); err == nil && strings.TrimSpace(string(b)) == "2" {
		t.Skip("io_uring is disabled on this kernel (kernel.io_uring_disabled=2)")
	}
	forEachKernelUser(t, func(t *testing.T, s *socketSession) {
		if out, err := s.command(t, nil, "uring-probe").CombinedOutput(); err != nil {
			t.Skipf("io_uring cannot be made here outside a session: %s", out)
		}
		out := s.run(t, nil, "uring-probe")
		if !strings.Contains(out, "io_uring refused: operation not permitted") {
			t.Errorf("inside a session, io_uring_setup was not refused with EPERM:\n%s", out)
		}
		// A session's own config only narrows: it cannot allow it.
		session := filepath.Join(s.home, "session.yaml")
		harness.WriteTree(t, s.home, map[string]string{"session.yaml": "allow_io_uring: true\n"})
		s.ownBy(session)
		c := s.command(t, []string{"DSH_FS_CONFIG=" + session}, s.bin, "exec", "--cwd", s.ws, "--", "uring-probe")
		if out, _ := c.CombinedOutput(); strings.Contains(string(out), "io_uring made") || !strings.Contains(string(out), "session cannot widen the policy") {
			t.Errorf("want a session config's allow_io_uring: true refused before CMD runs:\n%s", out)
		}
		s.config(t, "allow_io_uring: true\n")
		if out := s.run(t, nil, "uring-probe"); !strings.Contains(out, "io_uring made") {
			t.Errorf("under the trusted allow_io_uring: true, io_uring was refused:\n%s", out)
		}
	})
}
