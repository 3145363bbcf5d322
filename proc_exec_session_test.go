package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The TestExecSession* tests (issue 23) run dsh-fs exec as a harness
// would start an agent's day: a real bash moved into the workspace by
// --cwd, and a policy of the session's own named by exec --config, the
// harness's trusted base for that session alone.

// requireBash returns the path of bash, or skips: the cwd tests run the
// shell an agent gets.
func requireBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	return bash
}

// sessionTemp is a fresh temp folder by its canonical path, as exec
// pins it.
func sessionTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExecSessionCwd: exec --cwd DIR, started from another folder, runs
// CMD in DIR (canonical): bash's pwd is DIR, a relative dsh-fs write and
// a plain redirection land in DIR, and nothing lands where exec started.
// Before: pwd printed the folder exec was started from, the write was
// refused (outside the roots) and the redirection failed with
// "Read-only file system".
func TestExecSessionCwd(t *testing.T) {
	requireLandlock(t)
	bash := requireBash(t)
	t.Parallel()
	for _, tc := range []struct{ name, cwd string }{
		{"absolute", "$WS"},
		{"through a symlink", "$START/link"},
		{"relative to exec's folder", "../" + "$WSBASE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := sessionTemp(t)
			ws, start := filepath.Join(parent, "ws"), filepath.Join(parent, "start")
			writeTree(t, ws, map[string]string{".keep": ""})
			writeTree(t, start, map[string]string{".keep": ""})
			if err := os.Symlink(ws, filepath.Join(start, "link")); err != nil {
				t.Fatal(err)
			}
			cwd := strings.NewReplacer("$WSBASE", filepath.Base(ws), "$WS", ws, "$START", start).Replace(tc.cwd)
			env := execEnv(t, start)
			script := `pwd; dsh-fs write rel.txt --content x >/dev/null; echo "write=$?"; echo x > rel2; echo "redirect=$?"`
			c := procCmd(procBin(t), env, start, "exec", "--cwd", cwd, "--tmp=false", "--", bash, "-c", script)
			code, _, out, errs := procRun(t, c, nil)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if lines[0] != ws {
				t.Errorf("pwd printed %q, want the --cwd %s", lines[0], ws)
			}
			for _, want := range []string{"write=0", "redirect=0"} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in:\n%s\nstderr: %s", want, out, errs)
				}
			}
			wantContent(t, filepath.Join(ws, "rel.txt"), "x")
			wantContent(t, filepath.Join(ws, "rel2"), "x\n")
			wantAbsent(t, filepath.Join(start, "rel.txt"))
			wantAbsent(t, filepath.Join(start, "rel2"))
		})
	}
}

// TestExecSessionBadCwd: a --cwd that does not exist, or is not a
// folder, fails exec with FS_NOT_FOUND or FS_NOT_DIR, exit 1, naming
// it, and CMD never runs. Before: FS_INVALID_ARGUMENT, exit 2.
func TestExecSessionBadCwd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, cwd, code string }{
		{"missing", "nope", "FS_NOT_FOUND"},
		{"missing parent", "nope/deeper", "FS_NOT_FOUND"},
		{"a file", "file.txt", "FS_NOT_DIR"},
		{"a dangling symlink", "dangling", "FS_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := sessionTemp(t)
			writeTree(t, dir, map[string]string{"file.txt": "f\n"})
			if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err != nil {
				t.Fatal(err)
			}
			cwd, mark := filepath.Join(dir, tc.cwd), filepath.Join(dir, "ran")
			env := execEnv(t, dir)
			c := procCmd(procBin(t), env, dir, "exec", "--cwd", cwd, "--tmp=false", "--", "sh", "-c", "touch "+mark)
			code, _, out, errs := procRun(t, c, nil)
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errs)
			}
			r := lastResult(t, out)
			if r.Error.Code != tc.code || !strings.Contains(r.Error.Message, cwd) || !strings.Contains(r.Error.Message, "--cwd") {
				t.Errorf("error %s %q, want %s naming --cwd %s", r.Error.Code, r.Error.Message, tc.code, cwd)
			}
			wantAbsent(t, mark)
		})
	}
}
