package sandbox_test

import (
	"os"
	"os/exec"
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
// can tell a restricted process from a free one.
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
		name, arg, want string
		hostWrites      bool
	}{
		{"embedded", "", "facade inside: ok\nfacade outside: FS_SANDBOX_DENIED\nhost outside: ok\n", true},
		{"restricted", "restrict", "facade inside: ok\nfacade outside: FS_SANDBOX_DENIED\nhost outside: open ", false},
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
			// The temp roots would make every path here writable (both
			// folders are in the temp area); a session variable, which
			// only narrows, takes them out, as the testscripts do.
			cmd.Env = append(cleanEnv(), "DSH_FS_TMP=false")
			out, err := cmd.CombinedOutput()
			if strings.Contains(string(out), "restrict: FS_CONFIG_INVALID") {
				t.Skipf("no Landlock on this kernel, so no restricted process to tell apart: %s", out)
			}
			if err != nil || !strings.HasPrefix(string(out), tc.want) {
				t.Fatalf("embedder: %v\n%s\nwant it to start with:\n%s", err, out, tc.want)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "through the facade\n" {
				t.Errorf("inside.txt: %q, %v", b, err)
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
