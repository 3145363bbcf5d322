package kernel

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// canonicalTemp is a test's temporary folder with no symlink in its
// path, as Landlock rules are made on it.
func canonicalTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSocketRuleset pins the Landlock ruleset of the socket layer. This
// machine may lack ABI 9, where it applies: the rules are checked as
// built, and TestRestrictSockets applies them where the kernel can.
func TestSocketRuleset(t *testing.T) {
	cfg, rules := socketRuleset([]string{"/run/user/1000/ssh-agent.socket", "/run/user/1000/gnupg"})
	if got := cfg.HandledAccessFS; got != 1<<16 {
		t.Errorf("handled rights = %v, want resolve_unix alone (1<<16): it must restrict nothing else", got)
	}
	if len(rules) != 2 {
		t.Fatalf("%d rules, want one per grant", len(rules))
	}
	for i, path := range []string{"/run/user/1000/ssh-agent.socket", "/run/user/1000/gnupg"} {
		if s := fmt.Sprint(rules[i]); !strings.Contains(s, "{resolve_unix}") || !strings.Contains(s, path) {
			t.Errorf("rule %d = %s, want resolve_unix on %s", i, s, path)
		}
	}
	if _, rules := socketRuleset(nil); len(rules) != 0 {
		t.Errorf("no grant, %d rules: every outside socket must be refused", len(rules))
	}
}

// TestRestrictSockets: below ABI 9 RestrictSockets refuses, FS_IO, rather
// than restrict nothing; from ABI 9 a child restricted by it cannot reach
// a socket made outside but the granted one.
func TestRestrictSockets(t *testing.T) {
	if os.Getenv("SOCKETS_CHILD") != "" {
		t.Skip("in the child")
	}
	if ABI() < SocketRulesABI {
		err := RestrictSockets(nil)
		if fserr.CodeOf(err) != fserr.IO || err == nil || !strings.Contains(err.Error(), "no right for unix sockets") {
			t.Errorf("RestrictSockets on ABI %d = %v, want FS_IO saying why", ABI(), err)
		}
		t.Skipf("Landlock ABI %d: the socket right needs ABI 9, so the restriction itself cannot be tested here", ABI())
	}
	tmp := canonicalTemp(t)
	for _, name := range []string{"granted.sock", "other.sock"} {
		l, err := net.Listen("unix", filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestrictSocketsChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "SOCKETS_CHILD="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestRestrictSocketsChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestRestrictSocketsChild is TestRestrictSockets' restricted child.
func TestRestrictSocketsChild(t *testing.T) {
	dir := os.Getenv("SOCKETS_CHILD")
	if dir == "" {
		t.Skip("run by TestRestrictSockets")
	}
	granted := filepath.Join(dir, "granted.sock")
	if err := RestrictSockets([]string{granted}); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("unix", granted); err != nil {
		t.Errorf("the granted socket: %v", err)
	} else {
		c.Close()
	}
	if c, err := net.Dial("unix", filepath.Join(dir, "other.sock")); !errors.Is(err, syscall.EACCES) {
		t.Errorf("a socket made outside the domain: %v, want EACCES", err)
		if c != nil {
			c.Close()
		}
	}
	// One the restricted process makes itself still works.
	own := filepath.Join(dir, "own.sock")
	l, err := net.Listen("unix", own)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	if c, err := net.Dial("unix", own); err != nil {
		t.Errorf("the domain's own socket: %v", err)
	} else {
		c.Close()
	}
}
