package testscripts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestScripts runs every *.txtar file of this folder against the real
// command.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 scriptsDir(t),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"expandenv": cmdExpandenv,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				return sandbox.ActiveLayers(policy.Policy{}).LandlockABI > 0, nil
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
			if p, err := harness.LookPathIn("fake-approver", env.Getenv("PATH")); err == nil {
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
			osSetup(env)
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
