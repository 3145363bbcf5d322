//go:build unix

package exec

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestWithoutOpenat2: where a seccomp filter refuses openat2 (ENOSYS or
// EPERM, as older container runtimes do) or makes it ask for a retry
// without end (EAGAIN, EINTR), every operation still works, through the
// resolver's component walk, and still refuses what it refuses with
// openat2: a symlink out of the workspace, a write into .git. Nothing
// spins: a call retrying without end meets harness.Run's hang guard, and
// the sandbox package's TestOpenat2Refused counts the tries (one openat2
// per open, none after ENOSYS). Nothing is left behind.
func TestWithoutOpenat2(t *testing.T) {
	helper := seccompHelper(t)
	for _, errno := range []string{"ENOSYS", "EPERM", "EAGAIN", "EINTR"} {
		t.Run(errno, func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			harness.WriteTree(t, ws, map[string]string{"f.txt": "old\n", ".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n"})
			if err := os.Symlink(out, ws+"/out"); err != nil {
				t.Fatal(err)
			}
			env := harness.Env(t, ws)
			for _, tc := range []struct {
				args []string
				code string // "" for success
			}{
				{args: []string{"write", "f.txt", "--overwrite", "--content", "new\n"}},
				{args: []string{"edit", "f.txt", "--old", "new", "--new", "newer"}},
				{args: []string{"write", "sub/deeper/g.txt", "--mkdir", "--content", "g\n"}},
				{args: []string{"read", "sub/deeper/g.txt"}},
				{args: []string{"ls", "sub"}},
				{args: []string{"stat", "f.txt"}},
				{args: []string{"grep", "newer", "."}},
				{args: []string{"write", "out/x.txt", "--content", "x\n"}, code: "FS_SANDBOX_DENIED"},
				{args: []string{"write", ".git/config", "--overwrite", "--content", "x\n"}, code: "FS_SANDBOX_DENIED"},
			} {
				c := harness.Cmd(helper, env, ws, append([]string{"openat2", errno, "dsh-fs"}, tc.args...)...)
				code, res, _, stderr := harness.Run(t, c, nil)
				switch {
				case tc.code == "" && (code != 0 || !res.OK):
					t.Errorf("%v under openat2 %s: exit %d, %+v (stderr %q); want success", tc.args, errno, code, res.Error, stderr)
				case tc.code != "" && (code == 0 || res.Error.Code != tc.code):
					t.Errorf("%v under openat2 %s: exit %d, %+v; want %s", tc.args, errno, code, res.Error, tc.code)
				}
			}
			if got := harness.DirNames(t, ws); strings.Join(got, " ") != ".git f.txt out sub" {
				t.Errorf("workspace holds %v, want .git f.txt out sub", got)
			}
			if b, _ := os.ReadFile(ws + "/f.txt"); string(b) != "newer\n" {
				t.Errorf("f.txt = %q, want newer", b)
			}
			if b, _ := os.ReadFile(ws + "/.git/config"); string(b) != "[core]\n" {
				t.Errorf(".git/config = %q, want it unchanged", b)
			}
			if got := harness.DirNames(t, out); len(got) != 0 {
				t.Errorf("outside holds %v, want nothing", got)
			}
		})
	}
}

// seccompHelper finds the seccomp-errno command that TestMain installed.
func seccompHelper(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("seccomp-errno")
	if err != nil {
		t.Fatalf("seccomp-errno is not on $PATH: %v", err)
	}
	return p
}
