package harness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/mcpserver"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
	"github.com/dshfs/dsh-fs/internal/testns"
	"github.com/rogpeppe/go-internal/testscript"
)

// Main is the TestMain of every test package under e2e: it makes the
// package's test binary double as the dsh-fs command, as dsh-fs-mcp, as
// the helper programs every package may need (fake-approver,
// landlock-probe, seccomp-errno) and as the package's own programs, then
// runs the tests. testscript puts the binary on $PATH under each name, for
// scripts and for the Go tests that exec the real binary (Bin), so a test
// binary is its own dsh-fs: nothing is built, and each package's binary
// links the command once. A name in programs that is one of the shared
// ones panics: two programs under one name would make a test run the
// wrong one. Under go test -cover it needs -tags dshfs_testhooks
// (cover.go), and says so when it has not got it.
func Main(m *testing.M, programs map[string]func()) {
	requireCoverHook()
	all := map[string]func(){
		"dsh-fs":         func() { os.Exit(cli.NewApp(testLocations()).Run(os.Args[1:])) },
		cli.MCPBinary:    dshFsMcp,
		"fake-approver":  fakeApprover,
		"landlock-probe": landlockProbe,
		"seccomp-errno":  seccompErrno,
	}
	for name, run := range programs {
		if _, dup := all[name]; dup {
			panic("harness.Main: " + name + " is already a program of every test binary")
		}
		all[name] = run
	}
	if _, command := all[strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")]; command {
		testscript.Main(m, all) // one of the programs, in its test's namespace
		return
	}
	// The tests' sessions keep their state in a runtime folder of their
	// own, which every program they run shares.
	testns.Main(func() int { testscript.Main(m, all); return 0 }, wire.RuntimeBase())
}

// dshFsMcp is the test binary as dsh-fs-mcp, which dsh-fs mcp runs from
// the folder it is in: the dsh-fs above leaves the server out, as the
// release build does, so every MCP test goes through that hand-over.
func dshFsMcp() {
	app := cli.NewApp(testLocations())
	app.ServeMCP = func(s *config.Settings, dirs []string) error {
		return mcpserver.Serve(mcpserver.Host{Stdin: app.Stdin, Stdout: app.Stdout, Stderr: app.Stderr,
			LookupEnv: app.LookupEnv}, s, dirs)
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
		// The user's file is then ~/.config/dsh-fs/config.yaml of that
		// home on every OS, so the scripts that write one run on
		// Windows too, never reading the machine's %APPDATA%.
		loc.Home = func() (string, error) { return home, nil }
		loc.UserDir = nil
	}
	return loc
}

// LookPathIn finds an executable named name in the folders of path: on
// Windows name.exe, which has no execute bits to check.
func LookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
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
	f := sandbox.NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: args[0], Enforce: policy.EnforceLandlock})
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
