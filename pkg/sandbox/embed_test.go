package sandbox_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbedderKeepsItsOwnWrites builds a real program that embeds the
// facade (testdata/embedder, which imports pkg/ only) and runs it: its
// write inside the workspace passes through the facade, one outside is
// FS_SANDBOX_DENIED and writes nothing, and then its own plain
// os.WriteFile outside the roots still works: nothing the facade did
// restricted the host process. The control runs the same program after
// Sandbox.RestrictProcess, where that last write must fail, so the check
// can tell a restricted process from a free one. Two cases give the
// program a trusted user file, in a mount namespace of its own: one that
// says read-only, which the facade honours as the command does, and one
// that says approval: trust, under which the command grants whatever
// --escalate asks; the facade, which has no escalation, still denies.
func TestEmbedderKeepsItsOwnWrites(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build the embedding program")
	}
	bin := filepath.Join(t.TempDir(), "embedder")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./testdata/embedder").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, arg  string
		userFile   string // the trusted user file, "" for none
		want       []string
		inside     bool // inside.txt written
		hostWrites bool
	}{
		{name: "embedded", inside: true, hostWrites: true,
			want: []string{"facade inside: ok", "facade outside: FS_SANDBOX_DENIED", "host outside: ok"}},
		{name: "restricted", arg: "restrict", inside: true,
			want: []string{"facade inside: ok", "facade outside: FS_SANDBOX_DENIED", "host outside: open "}},
		{name: "trusted read-only", userFile: "mode: read-only\n", hostWrites: true,
			want: []string{"facade inside: FS_SANDBOX_DENIED", "facade outside: FS_SANDBOX_DENIED", "host outside: ok"}},
		// The facade has no escalation: a trusted policy that would grant
		// the command's every --escalate grants nothing here.
		{name: "trusted approval trust", userFile: "approval: trust\nmax_mode: danger-full-access\n", inside: true, hostWrites: true,
			want: []string{"facade inside: ok", "facade outside: FS_SANDBOX_DENIED", "host outside: ok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			ws, outside := filepath.Join(top, "ws"), filepath.Join(top, "outside")
			for _, d := range []string{ws, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bin, ws, outside)
			if tc.arg != "" {
				cmd.Args = append(cmd.Args, tc.arg)
			}
			if tc.userFile != "" {
				cmd = withUserFile(t, tc.userFile, cmd.Args)
			}
			// The temp roots would make every path here writable (both
			// folders are in the temp area); a session variable, which
			// only narrows, takes them out, as the testscripts do.
			cmd.Env = append(cleanEnv(), "DSH_FS_TMP=false")
			out, err := cmd.CombinedOutput()
			if strings.Contains(string(out), "restrict: FS_CONFIG_INVALID") {
				t.Skipf("no Landlock on this kernel, so no restricted process to tell apart: %s", out)
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if err != nil || len(lines) != len(tc.want) {
				t.Fatalf("embedder: %v\n%s", err, out)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], want)
				}
			}
			b, err := os.ReadFile(filepath.Join(ws, "inside.txt"))
			if tc.inside != (err == nil) || tc.inside && string(b) != "through the facade\n" {
				t.Errorf("inside.txt: %q, %v; want written: %v", b, err, tc.inside)
			}
			if _, err := os.Lstat(filepath.Join(outside, "facade.txt")); !os.IsNotExist(err) {
				t.Errorf("the denied write left facade.txt behind: %v", err)
			}
			_, err = os.Lstat(filepath.Join(outside, "host.txt"))
			if tc.hostWrites != (err == nil) {
				t.Errorf("host.txt written: %v, want %v (%v)", err == nil, tc.hostWrites, err)
			}
		})
	}
}

// withUserFile runs args in a mount namespace of their own whose home
// folder (the user database's, where the trusted user file is) is a
// fresh tmpfs holding .config/dsh-fs/config.yaml with body: the
// machine's real home and its files stay as they are. It skips where
// that cannot be made (not root, no unshare, no mount namespace).
func withUserFile(t *testing.T, body string, args []string) *exec.Cmd {
	t.Helper()
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || os.Geteuid() != 0 {
		t.Skip("a trusted user file in a home of its own needs root and a home in the user database")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare for a mount namespace")
	}
	if out, err := exec.Command(unshare, "--mount", "true").CombinedOutput(); err != nil {
		t.Skipf("no mount namespace here: %v %s", err, out)
	}
	const script = `set -e
mount -t tmpfs -o mode=0755 dsh-fs-test "$0"
mkdir -p "$0/.config/dsh-fs"
printf '%s' "$1" > "$0/.config/dsh-fs/config.yaml"
shift
exec "$@"`
	return exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "sh", "-c", script, u.HomeDir, body}, args...)...)
}

// cleanEnv is the test's environment without DSH_FS_* variables: the
// embedder's policy is the trusted files' and its own options'.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DSH_FS_") {
			env = append(env, kv)
		}
	}
	return env
}
