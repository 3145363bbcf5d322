package layout

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// makeSocket binds a unix socket at path and keeps it bound until the
// test ends, as a server's is.
func makeSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
}

// boundBeneath is the kernel's list, but only its sockets bound beneath
// one of dirs (as bound: the paths given to bind).
func boundBeneath(dirs ...string) func() ([]string, error) {
	return func() ([]string, error) {
		all, err := readBoundSockets()
		var out []string
		for _, s := range all {
			if slices.ContainsFunc(dirs, func(d string) bool { return sandbox.Beneath(d, s) }) {
				out = append(out, s)
			}
		}
		return out, err
	}
}

func TestParseNetUnix(t *testing.T) {
	listing := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 85316 /run/a b.sock\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03  1065\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01  1066 @abstract\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 85317 /run/a b.sock\n" +
		"0000000000000000: 00000002 00000000 00010000 0005 01 123456 rel.sock\n"
	got, err := parseNetUnix(listing)
	if want := []string{"/run/a b.sock", "rel.sock"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("parseNetUnix = %q, %v, want %q", got, err, want)
	}
	// A path holding a newline spans lines: refused, not cut short.
	if got, err := parseNetUnix(listing + "0000000000000000: 00000002 00000000 00010000 0001 01 9 /tmp/x\ny\n"); err == nil {
		t.Errorf("parseNetUnix of a path with a newline = %q, want an error", got)
	}
}

func TestSocketPlan(t *testing.T) {
	if SocketLandlock(policy.Policy{Mode: policy.WorkspaceWrite, Enforce: policy.EnforceAuto}) {
		t.Skip("Landlock fences sockets here (ABI 9): the mount layer hides none")
	}
	tmp := canonTemp(t)
	makeTree(t, tmp, "ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/", "ws/src/a.go",
		"run/file", "run/link => x", "alias => run", "full/")
	ws := filepath.Join(tmp, "ws")
	for _, s := range []string{
		"ws/a.sock", "ws/src/deep/b.sock", "ws/.git/fsmonitor--daemon.ipc", "ws/secrets/s.sock",
		"run/top.sock", "run/x/y.sock", "run/x/y/z.sock", "run/x/y/z/deep/er.sock", "alias/through-link.sock",
		"run/allowed.sock", "run/agents/1.sock", "run/agents/2.sock", "run/gnupg/S.gpg-agent", "run/gone.sock",
	} {
		makeSocket(t, filepath.Join(tmp, s))
	}
	os.Remove(filepath.Join(tmp, "run/gone.sock"))
	// A stale socket file, bound by nobody: nothing to reach.
	stale, _ := net.Listen("unix", filepath.Join(tmp, "run/stale.sock"))
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	// Neither a full folder nor depth stops the list: a session that
	// leaves files behind changes nothing.
	for i := range 3000 {
		os.WriteFile(filepath.Join(tmp, "full", strconv.Itoa(i)), nil, 0o644)
	}
	in := func(names ...string) []string {
		out := []string{}
		for _, n := range names {
			out = append(out, filepath.Join(tmp, n))
		}
		return out
	}
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"secrets"}, Home: tmp,
		// By a symlinked spelling, by a glob, and a folder whole.
		AllowUnixSockets: []string{tmp + "/alias/allowed.sock", "~/run/agents/*.sock", tmp + "/run/gnupg", tmp + "/absent.sock"}}
	o := testOptions()
	o.boundSockets = boundBeneath(tmp)
	got := o.planIndexed(p, []sandbox.Root{{Path: ws, Origin: "cwd"}}, nil)
	// In the root and out, at any depth, through a symlinked folder by
	// its canonical path; not the hidden folder's, not the allowed ones.
	want := in("run/through-link.sock", "run/top.sock", "run/x/y.sock", "run/x/y/z.sock", "run/x/y/z/deep/er.sock",
		"ws/.git/fsmonitor--daemon.ipc", "ws/a.sock", "ws/src/deep/b.sock")
	if !slices.Equal(got.HiddenSockets, want) || got.Partial != nil || got.SocketsOpen() {
		t.Errorf("PlanMounts:\n got %s\nwant hidden_sockets %q, no partial", planJSON(got), want)
	}
	if left := []string{filepath.Join(tmp, "run/gone.sock") + " (no socket at its path)"}; !slices.Equal(got.SocketsLeft, left) {
		t.Errorf("sockets_left = %q, want %q", got.SocketsLeft, left)
	}
	if !slices.Equal(got.Hidden, in("ws/secrets")) {
		t.Errorf("hidden = %q", got.Hidden)
	}
	// The list unread: nothing hidden, and the plan says so.
	o.boundSockets = func() ([]string, error) { return nil, errors.New("no /proc") }
	if got := o.planIndexed(p, []sandbox.Root{{Path: ws, Origin: "cwd"}}, nil); len(got.HiddenSockets) != 0 || !got.SocketsOpen() {
		t.Errorf("with the list unread: %s, want sockets open", planJSON(got))
	}
}

func TestSocketAt(t *testing.T) {
	tmp := canonTemp(t)
	makeSocket(t, filepath.Join(tmp, "a.sock"))
	os.WriteFile(filepath.Join(tmp, "file"), nil, 0o644)
	for _, tc := range []struct{ path, abs, why string }{
		{tmp + "/a.sock", tmp + "/a.sock", ""},
		{"a.sock", "", "bound at a relative path"},
		{tmp + "/file", "", "no socket at its path"},
		{tmp + "/missing/x.sock", "", "no socket at its path"},
	} {
		if abs, why := socketAt(tc.path); abs != tc.abs || why != tc.why {
			t.Errorf("socketAt(%s) = %q, %q, want %q, %q", tc.path, abs, why, tc.abs, tc.why)
		}
	}
	if m := (MountPlan{SocketsLeft: []string{"a.sock (bound at a relative path)"}}); !m.SocketsOpen() {
		t.Errorf("a socket bound at a relative path leaves the sockets open")
	}
}

func TestSocketGrants(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "alias => run")
	for _, s := range []string{"run/agents/1.sock", "run/agents/2.sock", "run/agents/x.txt.sock", "run/other.sock"} {
		makeSocket(t, filepath.Join(tmp, s))
	}
	bound := boundBeneath(tmp)
	p := policy.Policy{Home: tmp, AllowUnixSockets: []string{"~/alias/other.sock", tmp + "/run/agents/[0-9].sock", tmp + "/later.sock"}}
	// Literal entries as given and canonical (Landlock opens them; one
	// missing is ignored there), and what a glob covers now.
	want := []string{tmp + "/alias/other.sock", tmp + "/later.sock", tmp + "/run/agents/1.sock", tmp + "/run/agents/2.sock", tmp + "/run/other.sock"}
	if got := grantSockets(p, bound); !slices.Equal(got, want) {
		t.Errorf("SocketGrants:\n got %q\nwant %q", got, want)
	}
	if got := grantSockets(policy.Policy{}, bound); got == nil || len(got) != 0 {
		t.Errorf("SocketGrants of no entry = %#v, want an empty list (every socket refused)", got)
	}
	if got := grantSockets(policy.Policy{AllowUnixSockets: []string{"~/x.sock"}}, bound); len(got) != 0 {
		t.Errorf("SocketGrants without a home = %q: a ~ entry names nothing", got)
	}
}
