package supervisor

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
	"github.com/dshfs/dsh-fs/internal/testns"
)

// The test binary is its own helper process, as os/exec's tests are:
// with helperEnv set it runs its arguments as dsh-fs would (Entry), so
// the child, the probes and the brokered call run for real, in processes
// of their own, and their coverage counts (coverEnv).
const helperEnv = "DSH_FS_SHELL_TEST_HELPER"

// testHelpers are the helper processes a test file of one OS registers
// by the name it runs them under (argv[0]), each given one argument.
var testHelpers = map[string]func(arg string) int{}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		if status, ok := Entry(os.Args[1:], testCaller); ok {
			os.Exit(status)
		}
	}
	if helper, ok := testHelpers[filepath.Base(os.Args[0])]; ok && len(os.Args) == 2 {
		os.Exit(helper(os.Args[1]))
	}
	// Its sessions keep their state in a runtime folder of their own.
	testns.Main(m.Run, wire.RuntimeBase())
}

// testCaller stands for the front end in a brokered call: it prints what
// it was handed, so a test sees the request cross the process boundary.
var testCaller = Caller{
	Run: func(req wire.Request) error {
		// DecodeRequest moves the path onto the typed request.
		w, _ := req.Typed().(request.Write)
		if w.Path == "fail" {
			return fserr.New(fserr.NotFound, "brokered: nothing at fail")
		}
		mode, _ := os.LookupEnv("DSH_FS_MODE")
		fmt.Printf("run %s %s record=%s brokered=%s mode=%s path=%v\n", req.Op, w.Path, os.Getenv(wire.Env),
			os.Getenv(wire.BrokeredEnv), mode, os.Getenv("PATH") == "/evil")
		return nil
	},
	Fail: func(err error) int {
		fmt.Printf("fail %s: %v\n", fserr.CodeOf(err), err)
		return statusFailed
	},
}

// helperEnviron is the environment of a helper process: this one's, the
// helper switch, and where an instrumented binary writes its coverage
// counters, so `go test -cover` counts what the helper ran.
func helperEnviron() []string {
	env := append(os.Environ(), helperEnv+"=1")
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		env = append(env, "GOCOVERDIR="+f.Value.String())
	}
	return env
}

// testSelf is this test binary, the "dsh-fs" the helpers re-run.
func testSelf(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skip(name, "not found")
	}
	return p
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the child's namespaces are made without a user namespace")
	}
}
