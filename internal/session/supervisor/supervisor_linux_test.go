package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestRunSession runs a whole session in this process's supervisor, the
// test binary its child: CMD starts in the workspace under its record,
// writes there and nowhere else, its status passes through, and the
// record is gone once the session ends.
func TestRunSession(t *testing.T) {
	needRoot(t) // the record's folder is /run/dsh-fs as root; a user needs the one XDG_RUNTIME_DIR
	helperInEnv(t)
	ws := t.TempDir()
	outside := outsideWritableRoots(t)
	script := `pwd; echo in > f; test -s "$DSH_FS_SESSION" && echo "record $DSH_FS_SESSION"; if echo x > "$1/f"; then echo escaped; fi; exit 4`
	var stdout, stderr bytes.Buffer
	status, err := Run(Options{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader(""),
		LookupEnv: func(string) (string, bool) { return "", false },
		Settings:  sessionSettings(t, ws), Argv: []string{"sh", "-c", script, "sh", outside}})
	if err != nil {
		t.Fatalf("Run: %v (stderr %s)", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if status != 4 || len(lines) != 2 || lines[0] != ws || !strings.HasPrefix(lines[1], "record ") {
		t.Fatalf("status %d, stdout %q (stderr %s); want 4, the workspace and the record", status, stdout.String(), stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "f")); err != nil || string(b) != "in\n" {
		t.Errorf("the workspace's file: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "f")); !os.IsNotExist(err) {
		t.Errorf("CMD wrote outside the workspace: %v", err)
	}
	if _, err := os.Lstat(strings.TrimPrefix(lines[1], "record ")); !os.IsNotExist(err) {
		t.Errorf("the record outlived the session: %v", err)
	}
}

// outsideWritableRoots is a new folder beneath none of every session's
// writable roots (/tmp, os.TempDir()): beside this package's source if
// that is not beneath them (a checkout may be, as CI's clone in /tmp),
// else in /var/tmp or /root, which the test as root may write.
func outsideWritableRoots(t *testing.T) string {
	t.Helper()
	beneath := func(dir, root string) bool {
		rel, err := filepath.Rel(root, dir)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, parent := range []string{here, "/var/tmp", "/root"} {
		real, err := filepath.EvalSymlinks(parent)
		if err != nil || beneath(real, "/tmp") || beneath(real, os.TempDir()) {
			continue
		}
		dir, err := os.MkdirTemp(real, "outside-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Skip("no folder outside /tmp and os.TempDir() to write here")
	return ""
}

// TestRunRefuses: without a command, or with one that is not found, no
// session starts and no record is written.
func TestRunRefuses(t *testing.T) {
	ws := t.TempDir()
	before, _ := os.ReadDir(wire.RuntimeBase())
	for name, tc := range map[string]struct {
		opts Options
		code fserr.Code
	}{
		"no command":    {Options{Settings: sessionSettings(t, ws)}, fserr.InvalidArgument},
		"no settings":   {Options{Argv: []string{"sh"}}, fserr.InvalidArgument},
		"not found":     {Options{Settings: sessionSettings(t, ws), Argv: []string{"dsh-fs-no-such-command"}}, fserr.NotFound},
		"not a program": {Options{Settings: sessionSettings(t, ws), Argv: []string{ws}}, fserr.NotFound},
	} {
		t.Run(name, func(t *testing.T) {
			status, err := Run(tc.opts)
			if status != 0 || fserr.CodeOf(err) != tc.code {
				t.Errorf("Run = %d, %v; want 0 and %s", status, err, tc.code)
			}
		})
	}
	if after, _ := os.ReadDir(wire.RuntimeBase()); len(after) > len(before) {
		t.Errorf("a refused session left a record: %d entries in %s, %d before", len(after), wire.RuntimeBase(), len(before))
	}
}
