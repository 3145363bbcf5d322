package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/mcpserver"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestMain makes this test binary double as the dsh-fs command, as
// dsh-fs-mcp and as the helpers below: testscript puts it on $PATH under
// each name, for scripts and for the Go tests that exec the real binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"seccomp-errno":  seccompErrno,
		"exchange-loop":  exchangeLoop,
		"dsh-fs":         func() { os.Exit(cli.NewApp(testLocations()).Run(os.Args[1:])) },
		cli.MCPBinary:    dshFsMcp,
		"landlock-probe": landlockProbe,
		"fake-approver":  fakeApprover,
		"broker-send":    brokerSend,
		"unix-dial":      unixDial,
		"unix-serve":     unixServe,
		"tcp-dial":       tcpDial,
		"tiocsti-push":   tiocstiPush,
		"tty-thief":      ttyThief,
	})
}

// dshFsMcp is the test binary as dsh-fs-mcp, which dsh-fs mcp runs from
// the folder it is in: the dsh-fs above leaves the server out, as the
// release build does, so every MCP test goes through that hand-over.
func dshFsMcp() {
	app := cli.NewApp(testLocations())
	app.ServeMCP = func(s *config.Settings, dirs []string) error {
		return mcpserver.Serve(mcpserver.Host{Stdin: app.Stdin, Stdout: app.Stdout, Stderr: app.Stderr,
			LookupEnv: app.LookupEnv, DescribePolicy: cli.DescribePolicy}, s, dirs)
	}
	os.Exit(app.Run(os.Args[1:]))
}

// testLocations are the trusted files' places for this test binary's
// dsh-fs: DSH_FS_TEST_SYSTEM_DIR holds the system file and the managed
// requirements, and DSH_FS_TEST_HOME stands for the home folder of the
// user database, so tests can write trusted files without touching
// /etc/dsh-fs or the real user's. Only the test binary reads these
// variables; the release build's places are fixed (config.DefaultLocations).
func testLocations() config.Locations {
	loc := config.DefaultLocations()
	if dir := os.Getenv("DSH_FS_TEST_SYSTEM_DIR"); dir != "" {
		loc.SystemDir = dir
	}
	if home := os.Getenv("DSH_FS_TEST_HOME"); home != "" {
		loc.Home = func() (string, error) { return home, nil }
	}
	return loc
}

// TestScripts runs every testscripts/*.txtar file against the real command.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testscripts",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"expandenv": cmdExpandenv,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				return sandbox.ActiveLayers(sandbox.Policy{}).LandlockABI > 0, nil
			case "root":
				return os.Geteuid() == 0, nil
			case "worktmp":
				return workUnderTmp(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// Scripts start clean: no config file found by accident.
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/.no-xdg")
			env.Setenv("HOME", env.WorkDir+"/home")
			// The trusted sources of docs/design.md (issue 11) live at
			// fixed paths; the test binary's dsh-fs reads them here
			// instead: the system file and the managed requirements in
			// $WORK/etc/dsh-fs, the user file under $WORK/home, which is
			// also the user database's home ("~", "home is too broad").
			env.Setenv("DSH_FS_TEST_SYSTEM_DIR", env.WorkDir+"/etc/dsh-fs")
			env.Setenv("DSH_FS_TEST_HOME", env.WorkDir+"/home")
			// approval_command names its program by an absolute path (a
			// PATH lookup would be the session's to steer).
			if p, err := lookPathIn("fake-approver", env.Getenv("PATH")); err == nil {
				env.Setenv("FAKE_APPROVER", p)
			}
			// $WORK lives in the temp area, itself a writable root by
			// default: left on, every "outside" path of a script would be
			// writable and a fence test could not fail. A script about the
			// temp roots turns it back on.
			env.Setenv("DSH_FS_TMP", "false")
			// A -race build sleeps a second at exit by default: a second
			// for every dsh-fs call of every script.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

// workUnderTmp reports whether the scripts' $WORK lies beneath /tmp, as it
// does unless GOTMPDIR or TMPDIR say otherwise: then /tmp, a temp root,
// holds every "outside" path of a script, and a script that turns the
// temp roots on cannot show a write outside being denied.
func workUnderTmp() bool {
	dir := os.Getenv("GOTMPDIR")
	if dir == "" {
		dir = os.TempDir()
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true
	}
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		tmp = "/tmp"
	}
	return dir == tmp || strings.HasPrefix(dir, tmp+"/")
}

// lookPathIn finds an executable named name in the folders of path.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
}

// cmdExitcode runs a command and checks its exact exit status:
//
//	exitcode 3 dsh-fs write ../x --content y
//
// testscript's "!" only asserts "non-zero"; dsh-fs's statuses are API.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: exitcode N command [args...] (no !)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// fakeApprover is a test-only approval_command, a harness's approver:
//
//	fake-approver RECORD_FILE EXIT_CODE [SLEEP_SECONDS]
//
// It copies the escalation request it gets on stdin to RECORD_FILE, sleeps
// SLEEP_SECONDS when asked (to outlast approval_timeout), and exits with
// EXIT_CODE: 0 approves, anything else refuses.
func fakeApprover() {
	args := os.Args[1:]
	if len(args) < 2 || len(args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: fake-approver RECORD_FILE EXIT_CODE [SLEEP_SECONDS]")
		os.Exit(100)
	}
	code, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-approver: bad exit code:", args[1])
		os.Exit(100)
	}
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-approver: read stdin:", err)
		os.Exit(100)
	}
	if err := os.WriteFile(args[0], req, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fake-approver:", err)
		os.Exit(100)
	}
	if len(args) == 3 {
		secs, err := strconv.ParseFloat(args[2], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake-approver: bad sleep:", args[2])
			os.Exit(100)
		}
		time.Sleep(time.Duration(secs * float64(time.Second)))
	}
	os.Exit(code)
}

// cmdExpandenv rewrites files in place with $VAR and ${VAR} expanded from
// the script's environment:
//
//	expandenv etc/dsh-fs/config.yaml
//
// txtar sections are copied as they are, and a trusted config file needs
// absolute paths under $WORK (cwd: $WORK/ws).
func cmdExpandenv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expandenv FILE...")
	}
	for _, name := range args {
		p := ts.MkAbs(name)
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
	}
}

// landlockProbe is a test-only command that shows the kernel layer on its
// own, with the fence out of the way: it restricts itself as a
// workspace-write mutation would, for the workspace $1, then writes each
// further argument with a plain os.WriteFile, which no fence checks, and
// reads /etc/hostname. It prints one line per path: "ok PATH" or
// "denied PATH". Then each of probeThreads OS threads that existed before
// the restriction writes thread-N.txt beside the workspace (outside it)
// and prints "thread ok" or "thread denied": the restriction must reach
// every thread of the process, not only the one that asked for it. Exit 2
// when Landlock is not available.
//
//	landlock-probe $WORK/ws $WORK/ws/in.txt $WORK/outside.txt
func landlockProbe() {
	args := os.Args[1:]
	threads := startProbeThreads()
	f := sandbox.NewFence(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Cwd: args[0], Enforce: sandbox.EnforceLandlock})
	if err := f.Enforce(); err != nil {
		fmt.Println("no landlock:", err)
		os.Exit(2)
	}
	for _, p := range args[1:] {
		if err := os.WriteFile(p, []byte("probe\n"), 0o644); err != nil {
			fmt.Println("denied", p, errors.Unwrap(err))
			continue
		}
		fmt.Println("ok", p)
	}
	for i, t := range threads {
		p := filepath.Join(filepath.Dir(args[0]), fmt.Sprintf("thread-%d.txt", i))
		if err := t.write(p); err != nil {
			fmt.Println("thread denied", errors.Unwrap(err))
			continue
		}
		fmt.Println("thread ok", p)
	}
	if _, err := os.ReadFile("/etc/hostname"); err != nil {
		fmt.Println("read denied /etc/hostname")
		os.Exit(1)
	}
	fmt.Println("read ok /etc/hostname")
}

// probeThreads is how many OS threads landlockProbe starts before it
// restricts itself.
const probeThreads = 4

// probeThread is a goroutine locked to its own OS thread, which writes
// files on request.
type probeThread struct {
	paths chan string
	errs  chan error
}

func (t probeThread) write(path string) error {
	t.paths <- path
	return <-t.errs
}

// startProbeThreads starts probeThreads goroutines, each locked to a
// thread no other goroutine uses, and returns once all of them run.
func startProbeThreads() []probeThread {
	var threads []probeThread
	var started sync.WaitGroup
	for range probeThreads {
		t := probeThread{paths: make(chan string), errs: make(chan error)}
		started.Add(1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the process
			started.Done()
			for p := range t.paths {
				t.errs <- os.WriteFile(p, []byte("probe\n"), 0o644)
			}
		}()
		threads = append(threads, t)
	}
	started.Wait()
	return threads
}
