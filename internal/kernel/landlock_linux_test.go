package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
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
// built, and TestSocketsRuleset installs them where the kernel can.
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

// TestSocketsRuleset: below ABI 9 SocketsRuleset refuses, FS_IO, rather
// than restrict nothing; from ABI 9 readying the ruleset restricts
// nothing, and a child that installs it as a session's first process
// does cannot reach a socket made outside but the granted one.
func TestSocketsRuleset(t *testing.T) {
	if os.Getenv("SOCKETS_CHILD") != "" {
		t.Skip("in the child")
	}
	if ABI() < SocketRulesABI {
		fd, err := SocketsRuleset(nil)
		if fserr.CodeOf(err) != fserr.IO || err == nil || !strings.Contains(err.Error(), "no right for unix sockets") || fd != -1 {
			t.Errorf("SocketsRuleset on ABI %d = %d, %v; want -1 and FS_IO saying why", ABI(), fd, err)
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
	fd, err := SocketsRuleset([]string{filepath.Join(tmp, "granted.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if c, err := net.Dial("unix", filepath.Join(tmp, "other.sock")); err != nil {
		t.Errorf("after readying the ruleset, unrestricted: %v", err)
	} else {
		c.Close()
	}
	runInstalled(t, rawinit.Layers{Rulesets: []int{fd}}, -1, "TestSocketsRulesetChild", "SOCKETS_CHILD="+tmp)
}

// TestSocketsRulesetChild is TestSocketsRuleset's child, restricted by
// the socket layer before it started: it dials from there.
func TestSocketsRulesetChild(t *testing.T) {
	dir := os.Getenv("SOCKETS_CHILD")
	if dir == "" {
		t.Skip("run by TestSocketsRuleset")
	}
	granted := filepath.Join(dir, "granted.sock")
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

// writesLayout makes the places the write layer is probed on, beneath a
// folder of its own: dirs is w (granted), out is not; devices are
// dev.txt and the folder devs (standing for /dev/null and /dev/pts) and
// missing, which does not exist.
func writesLayout(t *testing.T) (base string, dirs, devices []string) {
	t.Helper()
	base = canonicalTemp(t)
	for _, d := range []string{"w", "out", "devs"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"out/existing", "dev.txt", "devs/tty"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs, devices, _ = writesPlaces(base)
	return base, dirs, devices
}

// writesPlaces are the write layer's arguments on writesLayout's base,
// scoped as a session's.
func writesPlaces(base string) (dirs, devices []string, scoped bool) {
	return []string{filepath.Join(base, "w")},
		[]string{filepath.Join(base, "dev.txt"), filepath.Join(base, "devs"), filepath.Join(base, "missing")}, true
}

// writesProbes makes, from the calling thread, each write the write
// layer decides, beneath base (writesLayout), and a signal to outside, a
// process of the same user outside the layer's domain; it says what the
// kernel answered to each: "ok" or the errno's name.
func writesProbes(base string, outside int) map[string]string {
	at := func(name string) string { return filepath.Join(base, name) }
	open := func(name string, flags int) error {
		fd, err := unix.Open(at(name), flags|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	probes := map[string]error{
		"create in a dir":             open("w/new", unix.O_CREAT),
		"mkfifo in a dir":             unix.Mkfifo(at("w/fifo"), 0o600),
		"mknod a char device in dir":  unix.Mknod(at("w/null"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))),
		"create outside":              open("out/new", unix.O_CREAT),
		"write outside":               open("out/existing", 0),
		"truncate outside":            unix.Truncate(at("out/existing"), 0),
		"write a device file":         open("dev.txt", 0),
		"write in a device folder":    open("devs/tty", 0),
		"create in a device folder":   open("devs/new", unix.O_CREAT),
		"remove from a device folder": unix.Unlink(at("devs/tty")),
		"signal a process outside":    unix.Kill(outside, 0),
	}
	got := map[string]string{}
	for name, err := range probes {
		got[name] = "ok"
		if err != nil {
			got[name] = unix.ErrnoName(err.(syscall.Errno))
		}
	}
	return got
}

// wantWrites is what writesProbes answers under the write layer on this
// kernel, scoped or not.
func wantWrites(scoped bool) map[string]string {
	want := map[string]string{
		"create in a dir": "ok", "mkfifo in a dir": "ok", "mknod a char device in dir": "EACCES",
		"create outside": "EACCES", "write outside": "EACCES", "truncate outside": "EACCES",
		"write a device file": "ok", "write in a device folder": "ok",
		"create in a device folder": "EACCES", "remove from a device folder": "EACCES",
		"signal a process outside": "ok",
	}
	if ABI() < 3 {
		want["truncate outside"] = "ok" // no truncate right before ABI 3
	}
	if scoped && ScopesHeld(ABI()) {
		want["signal a process outside"] = "EPERM"
	}
	return want
}

// TestWritesRuleset: readying the write layer restricts nothing (every
// probe still succeeds after it) and gives a close-on-exec descriptor;
// a child that installs it as a session's first process does is refused
// exactly what go-landlock's Config.Restrict refused for the same config
// (the path before the layer was readied), and the file tool's
// all-threads RestrictProcessWrites the same but the scopes.
func TestWritesRuleset(t *testing.T) {
	if os.Getenv("WRITES_CHILD") != "" {
		t.Skip("in the child")
	}
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Skipf("no sleep(1) to signal: %v", err)
	}
	defer sleeper.Wait()
	defer sleeper.Process.Kill()
	outside := sleeper.Process.Pid
	base, dirs, devices := writesLayout(t)
	fd, err := WritesRuleset(dirs, devices, true)
	if err != nil {
		t.Fatalf("WritesRuleset, with a missing device: %v", err)
	}
	defer unix.Close(fd)
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("ruleset descriptor flags %#x, %v: want close-on-exec", flags, err)
	}
	unrestricted := map[string]string{
		"create in a dir": "ok", "mkfifo in a dir": "ok", "mknod a char device in dir": "ok",
		"create outside": "ok", "write outside": "ok", "truncate outside": "ok",
		"write a device file": "ok", "write in a device folder": "ok",
		"create in a device folder": "ok", "remove from a device folder": "ok",
		"signal a process outside": "ok",
	}
	if os.Geteuid() != 0 {
		// Making a device node needs CAP_MKNOD; the layer refuses it
		// first (EACCES), as root or not.
		unrestricted["mknod a char device in dir"] = "EPERM"
	}
	if got := writesProbes(base, outside); !maps.Equal(got, unrestricted) {
		t.Errorf("after readying the ruleset, unrestricted: %v\nwant %v", got, unrestricted)
	}

	for _, how := range []struct {
		how    string
		scoped bool
	}{{"installed", true}, {"library", true}, {"process", false}} {
		base, _, _ := writesLayout(t)
		got := writesChild(t, base, how.how)
		if want := wantWrites(how.scoped); !maps.Equal(got, want) {
			t.Errorf("%s, in a child: probes %v\nwant %v", how.how, got, want)
		}
	}
	// The layer was the child's: the test process writes outside.
	if err := os.WriteFile(filepath.Join(base, "out/after"), nil, 0o644); err != nil {
		t.Errorf("a write outside, from the process that started the child: %v", err)
	}
}

// writesChild runs TestWritesRulesetChild on base (writesLayout)
// restricted as how says, and returns what its probes answered:
// "installed", the write layer readied here, scoped, and installed by
// the child as a session's first process does, before it starts.
func writesChild(t *testing.T, base, how string) map[string]string {
	t.Helper()
	var out []byte
	if how == "installed" {
		fd, err := WritesRuleset(writesPlaces(base))
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		out = []byte(runInstalled(t, rawinit.Layers{Rulesets: []int{fd}}, -1, "TestWritesRulesetChild",
			"WRITES_CHILD="+base, "WRITES_HOW="+how))
	} else {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWritesRulesetChild$", "-test.v")
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "WRITES_CHILD="+base, "WRITES_HOW="+how)
		var err error
		if out, err = cmd.CombinedOutput(); err != nil {
			t.Fatalf("child %s: %v\n%s", how, err, out)
		}
	}
	_, line, ok := strings.Cut(string(out), "PROBES ")
	line, _, _ = strings.Cut(line, "\n")
	got := map[string]string{}
	if !ok || json.Unmarshal([]byte(line), &got) != nil {
		t.Fatalf("child %s printed no probes:\n%s", how, out)
	}
	return got
}

// TestWritesRulesetChild is TestWritesRuleset's child, restricted as a
// whole process: before it started ("installed"), through go-landlock's
// Config.Restrict on the write layer's config, the path before it was
// readied ("library"), or through RestrictProcessWrites ("process"). Its
// probes run on any thread, and signal the parent test, outside its
// domain.
func TestWritesRulesetChild(t *testing.T) {
	base := os.Getenv("WRITES_CHILD")
	if base == "" {
		t.Skip("run by TestWritesRuleset")
	}
	dirs, devices, _ := writesPlaces(base)
	var err error
	switch how := os.Getenv("WRITES_HOW"); how {
	case "installed":
	case "library":
		cfg, rules := writesConfig(ABI(), dirs, devices, true)
		err = cfg.Restrict(rules...)
	case "process":
		err = RestrictProcessWrites(dirs, devices)
	default:
		t.Fatalf("WRITES_HOW %q", how)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(writesProbes(base, os.Getppid()))
	fmt.Printf("PROBES %s\n", b)
}

// TestWritesRulesetMissingDir: a folder of dirs that does not exist is
// an error, as go-landlock's Restrict made it (only devices may be
// missing), and nothing is left open.
func TestWritesRulesetMissingDir(t *testing.T) {
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	gone := filepath.Join(canonicalTemp(t), "gone")
	if fd, err := WritesRuleset([]string{gone}, nil, false); !errors.Is(err, syscall.ENOENT) || fd != -1 {
		t.Errorf("WritesRuleset(%s) = %d, %v; want -1 and ENOENT", gone, fd, err)
	}
}
