package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The tests under e2e run the real dsh-fs command as separate processes:
// Main put the test binary on $PATH under that name, race-instrumented
// under -race. Locks, kills and crashes are properties of processes, so
// goroutines would not test them.

// RepoRoot is the module's root, seen from a test package's folder, where
// go test runs its tests (every test package is e2e/<subject>, two
// folders down): the README, the sources the audit reads and the main
// packages are there.
const RepoRoot = "../.."

// Bin finds the dsh-fs command that Main installed: the test binary
// itself, under that name on $PATH.
func Bin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("dsh-fs")
	if err != nil {
		t.Fatalf("dsh-fs is not on $PATH (harness.Main should have put it there): %v", err)
	}
	return bin
}

// Env is the whole environment of a child: the workspace as cwd and
// only writable root, and no config file found by accident. The trusted
// sources of issue 11 are pointed at empty folders of the test's own
// (DSH_FS_TEST_SYSTEM_DIR for the system file and the managed
// requirements, DSH_FS_TEST_HOME for the user database's home), so the
// machine's /etc/dsh-fs and the real home folder play no part;
// WriteSystemConfig puts a trusted file there.
func Env(t testing.TB, ws string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"DSH_FS_CWD=" + ws,
		"DSH_FS_TMP=false",
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "none"),
		"DSH_FS_TEST_SYSTEM_DIR=" + filepath.Join(t.TempDir(), "etc", "dsh-fs"),
		"DSH_FS_TEST_HOME=" + home,
		// A race-instrumented child otherwise sleeps a second at exit.
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
		// exec asks the machine's go where its caches are (go env), and
		// go starts its telemetry sidecar, a process of its own session
		// that writes in XDG_CONFIG_HOME after go, and exec, ended: the
		// test's temp folder was then not empty at its removal (ci52,
		// TestExecShellFence/touch). "2" is x/telemetry's mark of a
		// process that starts no sidecar.
		"GO_TELEMETRY_CHILD=2",
	}
	// Under go test -cover, the child writes its coverage there at exit
	// (see cover.go).
	if d := os.Getenv("GOCOVERDIR"); d != "" {
		env = append(env, "GOCOVERDIR="+d)
	}
	return env
}

// WriteSystemConfig writes the trusted system file, config.yaml in the
// DSH_FS_TEST_SYSTEM_DIR of env (made by Env), with content.
func WriteSystemConfig(t testing.TB, env []string, content string) {
	t.Helper()
	const key = "DSH_FS_TEST_SYSTEM_DIR="
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, key); ok {
			WriteTree(t, dir, map[string]string{"config.yaml": content})
			return
		}
	}
	t.Fatalf("no %s in the environment %q", key, env)
}

// Cmd is one dsh-fs invocation in the workspace ws.
func Cmd(bin string, env []string, ws string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env = env
	c.Dir = ws
	return c
}

// Result is the part of a result line the tests look at.
type Result struct {
	OK    bool   `json:"ok"`
	Op    string `json:"op"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Replacements int    `json:"replacements"`
	SHA256       string `json:"sha256"`
	Bytes        int64  `json:"bytes"`
}

// Timeout bounds one dsh-fs process: a race-instrumented one takes
// under a second, two at most on a 2-core machine at load 17. It is a
// hang guard, never a speed claim: a command that does the work of many
// processes in turn, or runs while others share the machine, takes
// RunWithin with the bound scaled to that work (so many processes'
// Timeout).
const Timeout = 20 * time.Second

// Run runs c with stdin and returns its exit status, stdout, stderr
// and the decoded result line (zero if stdout is not one JSON line).
func Run(t testing.TB, c *exec.Cmd, stdin io.Reader) (int, Result, string, string) {
	t.Helper()
	return RunWithin(t, c, stdin, Timeout)
}

// RunWithin is Run for a command that runs many dsh-fs processes in
// turn (a session's loop of calls): its hang guard is bound, not the
// one a single process gets.
func RunWithin(t testing.TB, c *exec.Cmd, stdin io.Reader, bound time.Duration) (int, Result, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = stdin, &out, &errb
	if err := c.Start(); err != nil {
		t.Errorf("start %v: %v", c.Args, err)
		return -1, Result{}, "", ""
	}
	// A hung process (a lock never released) fails the test rather than
	// hanging the suite.
	hung := time.AfterFunc(bound, func() { c.Process.Kill() })
	err := c.Wait()
	if !hung.Stop() {
		t.Errorf("%v: still running after %v: killed", c.Args, bound)
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Errorf("run %v: %v", c.Args, err)
			return -1, Result{}, out.String(), errb.String()
		}
		code = ee.ExitCode()
	}
	var res Result
	_ = json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res)
	return code, res, out.String(), errb.String()
}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FileSHA256 is the hex SHA-256 of the file at path; an error fails the test.
func FileSHA256(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DirNames lists every entry of dir, hidden ones included (ls -A).
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// WriteTree creates each file of files (path relative to dir => content),
// with the folders it needs.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
