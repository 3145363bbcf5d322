//go:build unix

package exec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExec* tests run dsh-fs exec as a real process around a real
// sh, and check what the kernel lets the session's tree do: writes only
// beneath the writable roots, the pinned record as every inner call's
// base, the exit status and signals passed through, and the one brokered
// escalation the trusted approval allows. t.TempDir is under /tmp, a
// writable root by default, so every "outside" check runs exec with
// --tmp=false.

// execEnv is harness.Env for dsh-fs exec plus extra variables: without the
// DSH_FS_CWD and DSH_FS_TMP session variables, so that each test states
// the policy on exec's own (trusted) command line.
func execEnv(t *testing.T, ws string, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range harness.Env(t, ws) {
		if !strings.HasPrefix(kv, "DSH_FS_CWD=") && !strings.HasPrefix(kv, "DSH_FS_TMP=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// execSh runs `dsh-fs exec FLAGS -- sh -c SCRIPT` in ws and returns its
// exit status, stdout and stderr. Its hang guard is one process's,
// harness.Timeout: a SCRIPT that does the work of many (a loop of calls,
// a build, tens of thousands of files) takes execShWithin.
func execSh(t *testing.T, env []string, ws string, flags []string, script string) (int, string, string) {
	t.Helper()
	return execShWithin(t, env, ws, flags, script, harness.Timeout)
}

// execShWithin is execSh with the hang guard bound, scaled to the work
// SCRIPT does (harness.RunWithin).
func execShWithin(t *testing.T, env []string, ws string, flags []string, script string, bound time.Duration) (int, string, string) {
	t.Helper()
	args := append(append([]string{"exec"}, flags...), "--", "sh", "-c", script)
	code, _, out, errs := harness.RunWithin(t, harness.Cmd(harness.Bin(t), env, ws, args...), nil, bound)
	return code, out, errs
}

// fenced are exec's flags for a workspace-write session of ws alone.
func fenced(ws string) []string { return []string{"--cwd", ws, "--tmp=false"} }

// execResult is the part of an inner call's result line the tests read.
type execResult struct {
	OK        bool   `json:"ok"`
	Mode      string `json:"mode"`
	Escalated bool   `json:"escalated"`
	Error     struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	} `json:"error"`
}

// lastResult decodes the last line of out that is a JSON object: the
// shell may print lines of its own before it.
func lastResult(t *testing.T, out string) execResult {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var r execResult
		if strings.HasPrefix(lines[i], "{") && json.Unmarshal([]byte(lines[i]), &r) == nil {
			return r
		}
	}
	t.Errorf("no result line in %q", out)
	return execResult{}
}

// wantDenied checks that a session call was refused with exit status 3,
// code FS_SANDBOX_DENIED and reason, its message holding each of msgs.
func wantDenied(t *testing.T, code int, out, errs, reason string, msgs ...string) {
	t.Helper()
	if code != 3 {
		t.Errorf("exit %d, want 3\nstdout: %s\nstderr: %s", code, out, errs)
		return
	}
	r := lastResult(t, out)
	if r.Error.Code != "FS_SANDBOX_DENIED" || r.Error.Reason != reason {
		t.Errorf("error %s / %q, want FS_SANDBOX_DENIED / %q: %s", r.Error.Code, r.Error.Reason, reason, out)
	}
	for _, m := range msgs {
		if !strings.Contains(r.Error.Message, m) {
			t.Errorf("message %q does not say %q", r.Error.Message, m)
		}
	}
}

// wantAbsent fails unless path does not exist.
func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (or cannot be checked: %v)", path, err)
	}
}

// wantContent fails unless path holds want.
func wantContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	} else if string(b) != want {
		t.Errorf("%s = %q, want %q", path, b, want)
	}
}

// fenceCases are shell commands that try to change the folder $OUT, which
// holds only keep ("keep\n"), from a session whose one writable root is
// $WS, which holds in ("in\n"). Each is run under exec, where it must fail
// and leave $OUT as it was, and by plain sh, where it must change $OUT:
// the control that shows the case can fail.
var fenceCases = []struct{ name, script string }{
	{"create", `echo x >"$OUT/f"`},
	{"append", `echo x >>"$OUT/keep"`},
	{"truncate", `: >"$OUT/keep"`},
	{"remove", `rm "$OUT/keep"`},
	{"touch", `touch "$OUT/t"`},
	{"mkdir", `mkdir "$OUT/d"`},
	{"copy", `cp "$WS/in" "$OUT/c"`},
	{"move out", `mv "$WS/in" "$OUT/moved"`},
	{"hard link", `ln "$WS/in" "$OUT/hard"`},
	{"symlink in the workspace", `ln -s "$OUT/f2" "$WS/link" && echo x >"$WS/link"`},
	{"relative from /", `cd / && echo x >"${OUT#/}/f"`},
	{"dot-dot from the workspace", `cd "$WS" && echo x >"../$(basename "$OUT")/f"`},
}

// fenceLayout makes the workspace and the outside folder of a fence case,
// each its own temp folder, and the environment naming them.
func fenceLayout(t *testing.T) (ws, out string, env []string) {
	t.Helper()
	ws, out = t.TempDir(), t.TempDir()
	harness.WriteTree(t, ws, map[string]string{"in": "in\n"})
	harness.WriteTree(t, out, map[string]string{"keep": "keep\n"})
	return ws, out, execEnv(t, ws, "WS="+ws, "OUT="+out)
}

// outChanged says whether a fence case changed the outside folder.
func outChanged(t *testing.T, out string) bool {
	t.Helper()
	names := harness.DirNames(t, out)
	b, _ := os.ReadFile(filepath.Join(out, "keep"))
	return len(names) != 1 || names[0] != "keep" || string(b) != "keep\n"
}

// TestExecShellFence: every way a shell has to change a folder outside
// the writable roots fails under exec --tmp=false, and leaves it as it
// was; writes in the workspace succeed.
func TestExecShellFence(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	t.Run("workspace writable", func(t *testing.T) {
		t.Parallel()
		ws, out, env := fenceLayout(t)
		script := `set -e; echo a >"$WS/new"; mkdir "$WS/d"; mv "$WS/in" "$WS/d/in"; ln -s d/in "$WS/link"; echo b >>"$WS/link"; rm "$WS/new"; echo c >/dev/null`
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
		if code != 0 {
			t.Fatalf("exit %d in the workspace\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		wantContent(t, filepath.Join(ws, "d", "in"), "in\nb\n")
		wantAbsent(t, filepath.Join(ws, "new"))
		if outChanged(t, out) {
			t.Errorf("outside holds %q", harness.DirNames(t, out))
		}
	})
	for _, tc := range fenceCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, out, env := fenceLayout(t)
			code, stdout, stderr := execSh(t, env, ws, fenced(ws), tc.script)
			if code == 0 {
				t.Errorf("exit 0 under exec; stderr: %s", stderr)
			}
			// Landlock says EACCES or EXDEV; the mount layer's read-only
			// tree, where it applies, refuses first, with EROFS.
			if !strings.Contains(stderr, "Permission denied") && !strings.Contains(stderr, "cross-device") &&
				!strings.Contains(stderr, "Read-only file system") {
				t.Errorf("stderr does not say the kernel refused: %q (stdout %q)", stderr, stdout)
			}
			if outChanged(t, out) {
				t.Errorf("outside changed: it holds %q", harness.DirNames(t, out))
			}
			wantContent(t, filepath.Join(out, "keep"), "keep\n")
		})
	}
}

// TestExecShellFenceControl: the fence cases, run by plain sh, do change
// the outside folder, so TestExecShellFence's "unchanged" means the fence.
func TestExecShellFenceControl(t *testing.T) {
	t.Parallel()
	for _, tc := range fenceCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, out, env := fenceLayout(t)
			c := exec.Command("sh", "-c", tc.script)
			c.Env, c.Dir = env, ws
			code, _, _, stderr := harness.Run(t, c, nil)
			if code != 0 {
				t.Errorf("plain sh: exit %d: %s", code, stderr)
			}
			if !outChanged(t, out) {
				t.Errorf("plain sh left outside unchanged: the case cannot fail")
			}
		})
	}
}

// TestExecTmpDefault: left on (the default), the temp folders are
// writable roots of the session; --tmp=false takes them away.
func TestExecTmpDefault(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws, tmp := t.TempDir(), t.TempDir()
	env := execEnv(t, ws, "T="+tmp, "OSTMP="+os.TempDir())
	code, stdout, stderr := execSh(t, env, ws, []string{"--cwd", ws}, `echo x >"$T/f" && d=$(mktemp -d "$OSTMP/exectest.XXXXXX") && echo y >"$d/g" && rm -r "$d"`)
	if code != 0 {
		t.Fatalf("a write under /tmp with tmp on: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantContent(t, filepath.Join(tmp, "f"), "x\n")

	code, _, stderr = execSh(t, env, ws, fenced(ws), `echo z >"$T/h"`)
	if code == 0 {
		t.Errorf("a write under /tmp with --tmp=false: exit 0: %s", stderr)
	}
	wantAbsent(t, filepath.Join(tmp, "h"))
}

// TestExecReadOnly: in read-only mode the session writes nowhere, not
// even in its workspace, but to the devices a shell needs.
func TestExecReadOnly(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws := t.TempDir()
	env := execEnv(t, ws, "WS="+ws)
	flags := append(fenced(ws), "--mode", "read-only")
	code, stdout, stderr := execSh(t, env, ws, flags, `echo x >/dev/null && echo y >"$WS/f"`)
	if code == 0 || !strings.Contains(stderr, "Permission denied") && !strings.Contains(stderr, "Read-only file system") {
		t.Errorf("a write in the workspace in read-only mode: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantAbsent(t, filepath.Join(ws, "f"))
}

// TestExecEnvironment: the command gets the record (read-only, outside
// the roots, gone once exec ends) and the channel, and none of the
// DSH_FS_* settings exec folded into the record.
func TestExecEnvironment(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws := t.TempDir()
	env := execEnv(t, ws, "DSH_FS_DIFF_CONTEXT=5")
	code, stdout, stderr := execSh(t, env, ws, fenced(ws),
		`echo "session=$DSH_FS_SESSION"; echo "broker=$DSH_FS_BROKER_FD"; echo "context=${DSH_FS_DIFF_CONTEXT-unset}"; stat -c 'perm=%a' "$DSH_FS_SESSION"`)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"\nbroker=3\n", "\ncontext=unset\n", "\nperm=400\n"} {
		if !strings.Contains("\n"+stdout, want) {
			t.Errorf("the session's environment lacks %q: %s", strings.TrimSpace(want), stdout)
		}
	}
	rec, _, _ := strings.Cut(strings.TrimPrefix(stdout, "session="), "\n")
	if !filepath.IsAbs(rec) || strings.HasPrefix(rec, ws) {
		t.Errorf("record %q: want an absolute path outside the workspace", rec)
	}
	wantAbsent(t, rec)
}

// TestExecGoBuild: a real tool chain works under the fence: go build of
// a module in the workspace, with the build cache as an extra writable
// root and GOPATH and GOTMPDIR inside the workspace.
func TestExecGoBuild(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on $PATH: cannot build under exec")
	}
	cache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil || strings.TrimSpace(string(cache)) == "" || strings.TrimSpace(string(cache)) == "off" {
		t.Skipf("no go build cache (go env GOCACHE: %q, %v)", cache, err)
	}
	gocache := strings.TrimSpace(string(cache))
	ws := t.TempDir()
	harness.WriteTree(t, ws, map[string]string{
		"go.mod":       "module example.com/hello\n\ngo 1.21\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the session\") }\n",
		".gotmp/.keep": "",
	})
	env := execEnv(t, ws, "GOCACHE="+gocache, "GOPATH="+filepath.Join(ws, "gopath"),
		"GOMODCACHE="+filepath.Join(ws, "gopath", "pkg", "mod"), "GOTMPDIR="+filepath.Join(ws, ".gotmp"),
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	flags := append(fenced(ws), "--writable-root", gocache)
	// A build, and a session whose end reads the whole build cache (a
	// writable root the git guard walks): ci31 killed it at the single
	// process's guard under the race run's load, after the program ran.
	code, stdout, stderr := execShWithin(t, env, ws, flags, `go build -o hello . && ./hello`, 4*harness.Timeout)
	if code != 0 {
		t.Fatalf("go build under exec: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "hello from the session") {
		t.Errorf("the built program printed %q", stdout)
	}
	if fi, err := os.Stat(filepath.Join(ws, "hello")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("no executable hello in the workspace: %v", err)
	}
}

// TestExecWidening: a call inside the session that tries to widen the
// policy (flags, a config file of its own, or dropping DSH_FS_SESSION to
// fall back on a wider trusted file) writes nothing outside. The trusted
// file allows danger-full-access; exec itself narrowed the session to
// workspace-write, and the kernel holds that line whatever a call decides.
func TestExecWidening(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		// denied is the reason when the call itself refuses; "" when
		// only the kernel stands in the way.
		denied string
	}{
		{"--mode", `dsh-fs write "$OUT/x" --content y --mode danger-full-access`, "session cannot widen the policy"},
		{"--cwd /", `dsh-fs write "$OUT/x" --content y --cwd /`, "session cannot widen the policy"},
		{"--cwd outside", `dsh-fs write x --content y --cwd "$OUT"`, "session cannot widen the policy"},
		{"--writable-root", `dsh-fs write "$OUT/x" --content y --writable-root "$OUT"`, "session cannot widen the policy"},
		{"--config", `printf 'mode: danger-full-access\nwritable_roots: [%s]\n' "$OUT" >"$WS/own.yaml" && dsh-fs write "$OUT/x" --content y --config "$WS/own.yaml"`, "session cannot widen the policy"},
		{"DSH_FS_MODE", `DSH_FS_MODE=danger-full-access dsh-fs write "$OUT/x" --content y`, "session cannot widen the policy"},
		{"DSH_FS_SESSION emptied", `DSH_FS_SESSION= dsh-fs write "$OUT/x" --content y --mode danger-full-access`, ""},
		{"DSH_FS_SESSION unset", `unset DSH_FS_SESSION; dsh-fs write "$OUT/x" --content y`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, out := t.TempDir(), t.TempDir()
			env := execEnv(t, ws, "WS="+ws, "OUT="+out)
			harness.WriteSystemConfig(t, env, "mode: danger-full-access\nmax_mode: danger-full-access\n")
			flags := append(fenced(ws), "--mode", "workspace-write")
			code, stdout, stderr := execSh(t, env, ws, flags, tc.script)
			if tc.denied != "" {
				wantDenied(t, code, stdout, stderr, tc.denied)
			} else if r := lastResult(t, stdout); code != 1 || r.Mode != "danger-full-access" || r.Error.Code != "FS_PERMISSION" {
				// The call took the wider trusted file and let the
				// write through; the kernel must refuse it.
				t.Errorf("exit %d, want 1 with FS_PERMISSION under danger-full-access (the kernel's refusal)\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			wantAbsent(t, filepath.Join(out, "x"))
			if names := harness.DirNames(t, out); len(names) != 0 {
				t.Errorf("outside holds %q", names)
			}
		})
	}
}

// privateDir makes a folder that passes the record's folder check: it
// and every folder above it owned by root or this user and writable by no
// one else. /tmp (mode 1777) never does; the test skips where no such
// place can be made.
func privateDir(t *testing.T) string {
	t.Helper()
	var bases []string
	if os.Geteuid() == 0 {
		bases = append(bases, "/run")
	}
	if home, err := os.UserHomeDir(); err == nil {
		bases = append(bases, home)
	}
	for _, base := range bases {
		if !privateChain(base) {
			continue
		}
		dir, err := os.MkdirTemp(base, "dsh-fs-exectest-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Skipf("no folder outside /tmp that only this user may write (tried %q)", bases)
	return ""
}

func privateChain(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return false
		}
		st := fi.Sys().(*syscall.Stat_t)
		if (st.Uid != 0 && int(st.Uid) != os.Geteuid()) || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// forgedRecord is a well-formed record that would pin danger-full-access.
const forgedRecord = `{"version":1,"values":{"mode":"danger-full-access","max_mode":"danger-full-access","tmp":false},"roots":[],"shell":{},"supervisor_pid":1}`

// TestExecForgedRecord: inside the session, DSH_FS_SESSION pointed at a
// record the session could have written, or at none, is a denial, exit
// 3, reason "session record not trusted", and nothing is written.
func TestExecForgedRecord(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	priv := privateDir(t)
	// A record-like file outside every root, in a private folder, but
	// writable by its owner.
	writable := filepath.Join(priv, "writable.json")
	if err := os.WriteFile(writable, []byte(forgedRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	// A read-only one under /tmp, whose folder (mode 1777) anyone may
	// write.
	underTmp := filepath.Join(t.TempDir(), "tmp.json")
	if err := os.WriteFile(underTmp, []byte(forgedRecord), 0o400); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// privateWS puts the workspace in the private folder, so that
		// only its being a writable root can refuse a record there.
		privateWS bool
		script    string
		why       string
	}{
		{"copy in the workspace", true, `cp "$DSH_FS_SESSION" "$WS/rec.json" && DSH_FS_SESSION="$WS/rec.json"`, "writable root"},
		// issue 21: a record of its own that names no root, read-only,
		// in a workspace whose folders are private: only exec's runtime
		// folder holds records.
		{"forged in a private workspace", true, `printf '%s' "$FORGED" > "$WS/rec.json" && chmod 0400 "$WS/rec.json" && DSH_FS_SESSION="$WS/rec.json"`, "not in a session folder of exec's runtime folder"},
		{"copy in a workspace under /tmp", false, `cp "$DSH_FS_SESSION" "$WS/rec.json" && DSH_FS_SESSION="$WS/rec.json"`, "may be written by others"},
		{"symlink to the record", true, `ln -s "$DSH_FS_SESSION" "$WS/rec.json" && DSH_FS_SESSION="$WS/rec.json"`, "a symlink"},
		{"writable mode bits", false, `DSH_FS_SESSION="$WRITABLE"`, "mode 0600"},
		{"folder under /tmp", false, `DSH_FS_SESSION="$UNDERTMP"`, "may be written by others"},
		{"nonexistent", false, `DSH_FS_SESSION="$WS/none.json"`, "no such file"},
		{"relative", false, `DSH_FS_SESSION=none.json`, "not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			if tc.privateWS {
				var err error
				if ws, err = os.MkdirTemp(priv, "ws-"); err != nil {
					t.Fatal(err)
				}
			}
			out := t.TempDir()
			env := execEnv(t, ws, "WS="+ws, "OUT="+out, "WRITABLE="+writable, "UNDERTMP="+underTmp, "FORGED="+forgedRecord)
			script := tc.script + ` && export DSH_FS_SESSION && dsh-fs write "$OUT/x" --content y`
			code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
			wantDenied(t, code, stdout, stderr, "session record not trusted", tc.why)
			wantAbsent(t, filepath.Join(out, "x"))
		})
	}
}

// TestExecExitStatus: exec exits with its command's status, and with
// 128+N when signal N ended the command.
func TestExecExitStatus(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	for _, tc := range []struct {
		script string
		want   int
	}{
		{`exit 0`, 0},
		{`exit 7`, 7},
		{`kill -TERM $$`, 143},
		{`kill -KILL $$`, 137},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			code, stdout, stderr := execSh(t, execEnv(t, ws), ws, fenced(ws), tc.script)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.want, stdout, stderr)
			}
		})
	}
}

// TestExecSignals: a signal sent to the exec process reaches its
// command, whose trap runs and whose exit status exec passes through.
func TestExecSignals(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"TERM", syscall.SIGTERM},
		{"INT", syscall.SIGINT},
		{"HUP", syscall.SIGHUP},
		{"QUIT", syscall.SIGQUIT},
		{"USR1", syscall.SIGUSR1},
		{"USR2", syscall.SIGUSR2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			script := `trap 'echo got >"$WS/sig"; exit 5' ` + tc.name + `; echo ready; while :; do sleep 0.05; done`
			args := append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", script)
			c := harness.Cmd(harness.Bin(t), execEnv(t, ws, "WS="+ws), ws, args...)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			stdout, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			hung := time.AfterFunc(harness.Timeout, func() { c.Process.Kill() })
			defer hung.Stop()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if line != "ready\n" {
				c.Process.Kill()
				c.Wait()
				t.Fatalf("the session said %q (%v) instead of ready: %s", line, err, stderr.String())
			}
			if err := c.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = c.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 5 {
				t.Errorf("exec ended with %v, want exit status 5: %s", err, stderr.String())
			}
			wantContent(t, filepath.Join(ws, "sig"), "got\n")
		})
	}
}

// approverConfig is a trusted system file whose approval is the
// fake-approver command, recording each request in record and exiting
// with code.
func approverConfig(t *testing.T, record string, code int) string {
	t.Helper()
	approver, err := exec.LookPath("fake-approver")
	if err != nil {
		t.Fatalf("fake-approver is not on $PATH (TestMain should have put it there): %v", err)
	}
	return "approval: command\napproval_command: [" + strconv.Quote(approver) + ", " + strconv.Quote(record) + ", " + strconv.Quote(strconv.Itoa(code)) + "]\n"
}

// TestExecEscalateCommand: a write outside the roots asked with
// --escalate inside the session goes to the supervisor, which runs that
// one call outside the kernel layer when the trusted approval command
// approves it, and refuses it, writing nothing, when it does not. The
// approval covers that call alone.
func TestExecEscalateCommand(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	t.Run("approved", func(t *testing.T) {
		t.Parallel()
		ws, out, rec := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "request.json")
		env := execEnv(t, ws, "OUT="+out)
		harness.WriteSystemConfig(t, env, approverConfig(t, rec, 0))
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
		if code != 0 {
			t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if r := lastResult(t, stdout); !r.OK || !r.Escalated {
			t.Errorf("result %s: want ok and \"escalated\":true", stdout)
		}
		wantContent(t, filepath.Join(out, "x"), "hi")
		req, err := os.ReadFile(rec)
		if err != nil {
			t.Fatalf("the approver was not asked: %v", err)
		}
		for _, want := range []string{`"write"`, filepath.Join(out, "x"), `"danger-full-access"`} {
			if !bytes.Contains(req, []byte(want)) {
				t.Errorf("the approver's request does not hold %s: %s", want, req)
			}
		}

		// The approval was for that call: the next write outside,
		// without --escalate, meets the fence again.
		code, stdout, stderr = execSh(t, env, ws, fenced(ws), `dsh-fs write "$OUT/y" --content hi`)
		if code != 3 {
			t.Errorf("a write outside after an approved one: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		wantAbsent(t, filepath.Join(out, "y"))
	})
	t.Run("same session, then without --escalate", func(t *testing.T) {
		t.Parallel()
		ws, out, rec := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "request.json")
		env := execEnv(t, ws, "OUT="+out)
		harness.WriteSystemConfig(t, env, approverConfig(t, rec, 0))
		script := `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access || exit 90
dsh-fs write "$OUT/y" --content hi; echo "status $?" >&2
echo z >"$OUT/z"; exit 0`
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "status 3") {
			t.Errorf("the second write was not refused with exit 3: %s", stderr)
		}
		wantContent(t, filepath.Join(out, "x"), "hi")
		wantAbsent(t, filepath.Join(out, "y"))
		wantAbsent(t, filepath.Join(out, "z"))
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		ws, out, rec := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "request.json")
		env := execEnv(t, ws, "OUT="+out)
		harness.WriteSystemConfig(t, env, approverConfig(t, rec, 1))
		code, stdout, stderr := execSh(t, env, ws, fenced(ws), `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
		wantDenied(t, code, stdout, stderr, "escalation not approved")
		wantAbsent(t, filepath.Join(out, "x"))
		if _, err := os.Stat(rec); err != nil {
			t.Errorf("the approver was not asked: %v", err)
		}
	})
}

// TestExecEscalateStdin: a brokered call's standard streams are the
// caller's: content read with --from - reaches the supervisor's run.
func TestExecEscalateStdin(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws, out := t.TempDir(), t.TempDir()
	env := execEnv(t, ws, "OUT="+out)
	harness.WriteSystemConfig(t, env, "approval: trust\n")
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), `printf 'from stdin\n' | dsh-fs write "$OUT/z" --from - --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if r := lastResult(t, stdout); !r.OK || !r.Escalated {
		t.Errorf("result %s: want ok and \"escalated\":true", stdout)
	}
	wantContent(t, filepath.Join(out, "z"), "from stdin\n")
}

// TestExecEscalateNoChannel: without the inherited channel (the variable
// unset, or its descriptor closed) an escalation is refused, never run
// in the session, where the kernel would refuse it anyway.
func TestExecEscalateNoChannel(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	for _, tc := range []struct{ name, script, msg string }{
		{"unset", `unset DSH_FS_BROKER_FD; dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`, "DSH_FS_BROKER_FD is not set"},
		{"closed", `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access 3>&-`, ""},
		{"not a number", `DSH_FS_BROKER_FD=x dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, out := t.TempDir(), t.TempDir()
			env := execEnv(t, ws, "OUT="+out)
			harness.WriteSystemConfig(t, env, "approval: trust\n")
			code, stdout, stderr := execSh(t, env, ws, fenced(ws), tc.script)
			msgs := []string{"no channel to the dsh-fs exec supervisor"}
			if tc.msg != "" {
				msgs = append(msgs, tc.msg)
			}
			wantDenied(t, code, stdout, stderr, "escalation not approved", msgs...)
			wantAbsent(t, filepath.Join(out, "x"))
		})
	}
}

// TestExecEscalateTTY: under the default approval the person at the
// terminal of dsh-fs exec (its controlling terminal, a real
// pseudo-terminal here) is asked about a brokered write: "y" lets that
// one call write outside, "n" refuses it.
func TestExecEscalateTTY(t *testing.T) {
	harness.RequireLandlock(t)
	for _, tc := range []struct {
		answer  string
		code    int
		written bool
	}{
		{"y\n", 0, true},
		{"n\n", 3, false},
	} {
		t.Run(strings.TrimSpace(tc.answer), func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			env := execEnv(t, ws, "OUT="+out)
			r := runUnderTTY(t, env, ws, tc.answer, append(append([]string{"exec"}, fenced(ws)...),
				"--", "sh", "-c", `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)...)
			if !r.prompted || !strings.Contains(r.screen, "Allow this one call") {
				t.Fatalf("no question at exec's terminal; it shows %q; output %s", r.screen, r.stdout)
			}
			if !strings.Contains(r.screen, filepath.Join(out, "x")) {
				t.Errorf("the question does not name the path: %q", r.screen)
			}
			if r.code != tc.code {
				t.Errorf("exit %d, want %d: %s", r.code, tc.code, r.stdout)
			}
			if tc.written {
				wantContent(t, filepath.Join(out, "x"), "hi")
				if !strings.Contains(r.stdout, `"escalated":true`) {
					t.Errorf("result %s: want \"escalated\":true", r.stdout)
				}
			} else {
				wantAbsent(t, filepath.Join(out, "x"))
				if !strings.Contains(r.stdout, `"reason":"escalation not approved"`) {
					t.Errorf("result %s: want reason \"escalation not approved\"", r.stdout)
				}
			}
		})
	}
}

// TestExecRelativePaths: inside a session a relative path resolves from
// the shell's directory, while the workspace root stays the one exec
// pinned, which dsh-fs policy reports, every setting with origin pinned.
func TestExecRelativePaths(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws := t.TempDir()
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	harness.WriteTree(t, ws, map[string]string{"sub/.keep": ""})
	env := execEnv(t, ws, "WS="+ws)
	script := `cd "$WS/sub" && dsh-fs write f --content x >/dev/null && dsh-fs write ../g --content y >/dev/null && dsh-fs policy`
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantContent(t, filepath.Join(ws, "sub", "f"), "x")
	wantContent(t, filepath.Join(ws, "g"), "y")
	wantAbsent(t, filepath.Join(ws, "f"))
	var pol struct {
		Settings []struct {
			Key    string `json:"key"`
			Value  any    `json:"value"`
			Origin string `json:"origin"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &pol); err != nil || len(pol.Settings) == 0 {
		t.Fatalf("dsh-fs policy printed %q (%v)", stdout, err)
	}
	for _, s := range pol.Settings {
		if s.Origin != "pinned" {
			t.Errorf("setting %s has origin %q, want pinned", s.Key, s.Origin)
		}
		if s.Key == "cwd" && s.Value != ws {
			t.Errorf("cwd %v, want the workspace exec pinned, %s", s.Value, ws)
		}
	}
}
