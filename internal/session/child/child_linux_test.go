package child

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The test binary is its own child, as os/exec's tests are: with
// helperEnv set it runs as exec's child (Run), in a process of its own,
// named as exec names it.
const helperEnv = "DSH_FS_CHILD_TEST_HELPER"

// argExecChild is the argument the supervisor starts its child with; the
// tests name the helper so, as pid 1's command line shows.
const argExecChild = "__exec-child"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(Run())
	}
	if mode := os.Getenv(opsHelperEnv); mode != "" {
		os.Exit(runOpsHelper(mode))
	}
	os.Exit(m.Run())
}

// mountNamespace is a mount namespace of the child's own, as the
// supervisor starts it in (in a user namespace there: as root here); the
// PID namespace is the first process's (Start).
func mountNamespace() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
}

// exitStatusOf is a process's exit status as a shell reports it.
func exitStatusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// childRun is what a child started by runChild did.
type childRun struct {
	stdout string
	status int
	// failure is what the child reported on its error pipe; nil when it
	// became CMD.
	failure *Failure
}

// runChild starts this test binary as exec's child (argExecChild) with
// the descriptors the supervisor gives it, writes spec (raw, when it is
// a []byte) and waits for it. attr, when not nil, is the child's
// SysProcAttr (its namespaces).
func runChild(t *testing.T, spec any, attr *syscall.SysProcAttr) childRun {
	t.Helper()
	specR, specW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	broker, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self)
	c.Args = []string{"dsh-fs", argExecChild}
	c.Env = append(os.Environ(), helperEnv+"=1")
	var stdout bytes.Buffer
	c.Stdout, c.Stderr = &stdout, os.Stderr
	c.ExtraFiles = []*os.File{broker, specR, errW}
	c.SysProcAttr = attr
	err = c.Start()
	specR.Close()
	errW.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := spec.([]byte)
	if !ok {
		raw, _ = json.Marshal(spec)
	}
	specW.Write(raw)
	specW.Close()
	report, _ := io.ReadAll(errR)
	errR.Close()
	err = c.Wait()
	run := childRun{stdout: stdout.String(), status: exitStatusOf(c.ProcessState)}
	if len(report) > 0 {
		run.failure = &Failure{}
		if err := json.Unmarshal(report, run.failure); err != nil {
			t.Fatalf("the child's report %q is not a failure: %v", report, err)
		}
	}
	return run
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

// TestChildBecomesCMD pins the child's plain life: with no layer asked
// for it becomes CMD (its program, its argv, the environment it was
// given), its exit status is CMD's, and its error pipe closes empty.
func TestChildBecomesCMD(t *testing.T) {
	sh := lookPath(t, "sh")
	script := `tr '\0' ' ' < /proc/$$/cmdline; echo "| $0 $1 $` + helperEnv + `"; exit 7`
	run := runChild(t, plan.Plan{Path: sh, Argv: []string{"my-shell", "-c", script, "zero", "one"}, Ctty: -1}, nil)
	if run.failure != nil {
		t.Fatalf("the child failed: %+v", run.failure)
	}
	want := "my-shell -c " + script + " zero one | zero one 1\n"
	if run.status != 7 || run.stdout != want {
		t.Errorf("status %d, stdout %q; want 7 and %q", run.status, run.stdout, want)
	}
}

// TestChildRefusesNoSpec: a child started by anything but exec (no spec,
// a broken one, one without a command) says so and runs nothing.
func TestChildRefusesNoSpec(t *testing.T) {
	for name, spec := range map[string]any{
		"empty":      []byte{},
		"not json":   []byte("sh -c 'touch pwn'"),
		"no command": plan.Plan{Path: "/bin/sh"},
	} {
		t.Run(name, func(t *testing.T) {
			run := runChild(t, spec, nil)
			if run.failure == nil || run.failure.Code != fserr.InvalidArgument || !strings.Contains(run.failure.Message, "not given a spec") {
				t.Fatalf("failure %+v, want %s: not given a spec", run.failure, fserr.InvalidArgument)
			}
			if run.status != statusFailed || run.stdout != "" {
				t.Errorf("status %d, stdout %q; want %d and nothing", run.status, run.stdout, statusFailed)
			}
		})
	}
}

// TestChildCommandMissing: a program that cannot be executed is the
// child's failure, named by CMD's argv[0], after every layer was set.
func TestChildCommandMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-program")
	run := runChild(t, plan.Plan{Path: missing, Argv: []string{"prog"}, Unprivileged: true, Ctty: -1}, nil)
	if run.failure == nil || run.failure.Code != fserr.IO || run.failure.Message != "prog: no such file or directory" {
		t.Fatalf("failure %+v, want %s: prog: no such file or directory", run.failure, fserr.IO)
	}
	if run.status != statusFailed {
		t.Errorf("status %d, want %d", run.status, statusFailed)
	}
}

// TestChildKernelLayer: with Landlock the child's CMD writes beneath its
// roots and nowhere else, and the null device stays writable.
func TestChildKernelLayer(t *testing.T) {
	if kernel.ABI() == 0 {
		t.Skip("no Landlock on this kernel")
	}
	sh := lookPath(t, "sh")
	root, outside := t.TempDir(), t.TempDir()
	script := `echo in > "$1/f" && echo null > /dev/null && if echo out > "$2/f"; then echo escaped; fi`
	run := runChild(t, plan.Plan{Path: sh, Argv: []string{"sh", "-c", script, "sh", root, outside}, RestrictWrites: true,
		Writable: []string{root}, Ctty: -1}, nil)
	if run.failure != nil || run.status != 0 || strings.Contains(run.stdout, "escaped") {
		t.Fatalf("failure %+v, status %d, stdout %q", run.failure, run.status, run.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(root, "f")); err != nil || string(b) != "in\n" {
		t.Errorf("the root's file: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "f")); !os.IsNotExist(err) {
		t.Errorf("a file was made outside the roots: %v", err)
	}
}

// TestChildDropsPrivileges: CMD keeps no capability, as root too, and
// no_new_privs holds.
func TestChildDropsPrivileges(t *testing.T) {
	sh := lookPath(t, "sh")
	run := runChild(t, plan.Plan{Path: sh, Argv: []string{"sh", "-c", `grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status`},
		Unprivileged: true, Ctty: -1}, nil)
	if run.failure != nil || run.status != 0 {
		t.Fatalf("failure %+v, status %d", run.failure, run.status)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(run.stdout, want) {
			t.Errorf("CMD's status lacks %q:\n%s", want, run.stdout)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(run.stdout, "CapBnd:\t0000000000000000") {
		t.Errorf("as root, the bounding set is emptied:\n%s", run.stdout)
	}
}

// TestChildSessionInit: in the session's namespaces the child's first
// process, a fork of it, is pid 1 of the session's PID namespace, with a
// /proc of its own where CMD sees only the session's processes and a
// network of only loopback; CMD's status passes through it.
func TestChildSessionInit(t *testing.T) {
	needRoot(t)
	sh := lookPath(t, "sh")
	attr := mountNamespace()
	attr.Cloneflags |= syscall.CLONE_NEWNET
	script := `tr '\0' ' ' < /proc/1/cmdline; echo; ls /proc | grep -c '^[0-9][0-9]*$'; cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' '; exit 5`
	run := runChild(t, plan.Plan{Path: sh, Argv: []string{"sh", "-c", script}, Init: true, Network: true, Unprivileged: true, Ctty: -1}, attr)
	if run.failure != nil {
		t.Fatalf("the child failed: %+v", run.failure)
	}
	lines := strings.Split(strings.TrimSpace(run.stdout), "\n")
	if run.status != 5 || len(lines) != 3 {
		t.Fatalf("status %d, stdout %q; want 5 and three lines", run.status, run.stdout)
	}
	if lines[0] != "dsh-fs "+argExecChild+" " {
		t.Errorf("pid 1 is %q, want the child's fork (dsh-fs %s)", lines[0], argExecChild)
	}
	// Init, the shell, ls and grep: never the host's.
	if lines[1] != "4" {
		t.Errorf("CMD sees %s processes, want 4 (init, sh, ls, grep)", lines[1])
	}
	if lines[2] != "lo" {
		t.Errorf("the session's network devices are %q, want lo alone", lines[2])
	}
}

// TestChildLayerFailures: a layer the child cannot set up is its
// failure, named by the layer, and CMD never runs. The layers that
// mount run in the session's namespaces, so nothing here is mounted on
// the host.
func TestChildLayerFailures(t *testing.T) {
	sh := lookPath(t, "sh")
	type layerCase struct {
		spec plan.Plan
		attr func() *syscall.SysProcAttr
		want string
	}
	cases := map[string]layerCase{}
	if os.Geteuid() == 0 {
		cases["mount layer, no empty file"] = layerCase{plan.Plan{Files: &plan.Files{HiddenFiles: []string{"/etc/hostname"}}}, mountNamespace, "mount layer: "}
		cases["mount layer, overlay refused"] = layerCase{plan.Plan{Files: &plan.Files{Overlays: []plan.Overlay{{Path: "/nonexistent-cache", Upper: "/nonexistent-u", Work: "/nonexistent-w"}}}}, mountNamespace, "mount layer: "}
		// Descriptor 9 is no socket: the session's terminal is made,
		// but cannot be handed to the supervisor.
		cases["terminal handover"] = layerCase{plan.Plan{Init: true, Terminal: &plan.Terminal{FD: 9, Streams: []int{0}}}, mountNamespace, "terminal layer: "}
		cases["no network namespace to raise"] = layerCase{plan.Plan{Network: true}, func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER} }, "network layer: "}
	}
	if kernel.ABI() < kernel.SocketRulesABI {
		cases["socket layer on an old kernel"] = layerCase{plan.Plan{Sockets: []string{}}, nil, "socket layer: "}
	}
	if len(cases) == 0 {
		t.Skip("every layer can be set up here, and the mount layer's failures need root")
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pwn := filepath.Join(t.TempDir(), "pwn")
			spec := tc.spec
			spec.Path, spec.Argv, spec.Ctty = sh, []string{"sh", "-c", "touch " + pwn}, -1
			var attr *syscall.SysProcAttr
			if tc.attr != nil {
				attr = tc.attr()
			}
			run := runChild(t, spec, attr)
			if run.failure == nil || !strings.HasPrefix(run.failure.Message, tc.want) {
				t.Fatalf("failure %+v, want one of %q", run.failure, tc.want)
			}
			if run.status != statusFailed {
				t.Errorf("status %d, want %d", run.status, statusFailed)
			}
			if _, err := os.Lstat(pwn); !os.IsNotExist(err) {
				t.Errorf("CMD ran: %v", err)
			}
		})
	}
}
