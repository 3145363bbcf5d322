package supervisor

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestEntryKnowsOnlyItsArguments: a command line that is not exactly one
// hidden entry point is a command's, left to the front end.
func TestEntryKnowsOnlyItsArguments(t *testing.T) {
	for _, args := range [][]string{nil, {}, {"read", "x"}, {"exec", "--", "sh"}, {argExecChild, "sh"}, {"--", argExecChild}, {"__nope"}, {"__EXEC-CHILD"}} {
		if status, ok := Entry(args, Caller{}); ok || status != 0 {
			t.Errorf("Entry(%q) = %d, %v; want 0, false", args, status, ok)
		}
	}
}

// TestSelfCommand pins how dsh-fs re-runs itself: the binary given, its
// argv[0] "dsh-fs", the entry point its only argument.
func TestSelfCommand(t *testing.T) {
	for entry, c := range map[string]*exec.Cmd{argCachesProbe: selfCommand("/x/dsh-fs-mcp", argCachesProbe), argEscalator: EscalatorCommand("/x/dsh-fs-mcp")} {
		if c.Path != "/x/dsh-fs-mcp" || len(c.Args) != 2 || c.Args[0] != "dsh-fs" || c.Args[1] != entry {
			t.Errorf("%s: path %q args %q", entry, c.Path, c.Args)
		}
	}
}

func writeRequest(t *testing.T, path string) wire.Request {
	return wire.Request{Op: wire.OpWrite, Escalate: string(policy.WorkspaceWrite), Dir: t.TempDir(),
		Write: &request.Write{Path: path, Content: []byte("x")}}
}

// helperInEnv makes this process's environment the helpers' (callRunner
// and the escalator start their processes with this process's own).
func helperInEnv(t *testing.T) {
	for _, kv := range helperEnviron()[len(os.Environ()):] {
		name, val, _ := strings.Cut(kv, "=")
		t.Setenv(name, val)
	}
}

// TestCallRunner: a forwarded request is carried out by this binary as
// the brokered call, under the record it is given and the caller's
// setting variables alone, its output and status in the reply.
func TestCallRunner(t *testing.T) {
	helperInEnv(t)
	t.Setenv(wire.Env, "/outer/record") // never what the call runs under
	r := &callRunner{self: testSelf(t), record: "/the/record"}
	ok := writeRequest(t, "a.txt")
	ok.Env = []string{"DSH_FS_MODE=read-only", "PATH=/evil", wire.Env + "=/forged"}
	rep := r.run(ok)
	if want := "run write a.txt record=/the/record brokered=1 mode=read-only path=false\n"; rep.Status != 0 || rep.Stdout != want || rep.Refused != "" {
		t.Errorf("reply %+v, want status 0 and %q", rep, want)
	}
	rep = r.run(writeRequest(t, "fail"))
	if want := "fail FS_NOT_FOUND: brokered: nothing at fail\n"; rep.Status != statusFailed || rep.Stdout != want {
		t.Errorf("reply %+v, want status %d and %q", rep, statusFailed, want)
	}
	// A directory that is gone: the call cannot start, and says so.
	gone := writeRequest(t, "a.txt")
	gone.Dir = filepath.Join(t.TempDir(), "gone")
	if rep := r.run(gone); rep.Status != statusFailed || !strings.HasPrefix(rep.Refused, "the supervisor cannot run it: ") {
		t.Errorf("reply %+v, want a refusal", rep)
	}
}

// TestBrokeredCallRefusesMalformedRequest: the brokered call decodes its
// request strictly again; what does not decode is its failure, an
// invalid argument, and nothing runs.
func TestBrokeredCallRefusesMalformedRequest(t *testing.T) {
	for name, body := range map[string]string{
		"not json":      "write a.txt",
		"unknown field": `{"op":"write","path":"a","escalate":"workspace-write","write":{"content":"eA=="},"shell":"sh"}`,
		"not escalated": `{"op":"write","path":"a","write":{"content":"eA=="}}`,
	} {
		t.Run(name, func(t *testing.T) {
			reqR, reqW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			null, _ := os.Open(os.DevNull)
			defer null.Close()
			c := selfCommand(testSelf(t), argBrokeredCall)
			c.Env = helperEnviron()
			var out bytes.Buffer
			c.Stdout = &out
			c.ExtraFiles = []*os.File{null, reqR}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			reqR.Close()
			reqW.WriteString(body)
			reqW.Close()
			c.Wait()
			if status := c.ProcessState.ExitCode(); status != statusFailed || !strings.HasPrefix(out.String(), "fail "+string(fserr.InvalidArgument)+": ") {
				t.Errorf("status %d, stdout %q; want %d and an invalid argument", status, out.String(), statusFailed)
			}
		})
	}
}

// TestEscalator: dsh-fs mcp's escalator serves the calls its parent
// forwards, under the record wire.Env names, until the channel
// closes; then it ends.
func TestEscalator(t *testing.T) {
	helperInEnv(t)
	mine, theirs, err := wire.NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	asks, asksTheirs, err := SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer asks.Close()
	c := EscalatorCommand(testSelf(t))
	c.Env = append(WithoutSessionVars(os.Environ()), wire.Env+"=/escalator/record")
	c.Stderr = os.Stderr
	c.ExtraFiles = []*os.File{theirs, asksTheirs}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	asksTheirs.Close()
	rep, err := wire.Forward(int(mine.Fd()), writeRequest(t, "b.txt"))
	if want := "run write b.txt record=/escalator/record brokered=1 mode= path=false\n"; err != nil || rep.Status != 0 || rep.Stdout != want {
		t.Errorf("reply %+v, %v; want status 0 and %q", rep, err, want)
	}
	mine.Close()
	if err := c.Wait(); err != nil {
		t.Errorf("the escalator did not end cleanly once its channel closed: %v", err)
	}
}

// TestUserNamespaceProbe: the probe mounts in the private namespace it
// is started in and says it could; as root exec needs no probe.
func TestUserNamespaceProbe(t *testing.T) {
	needRoot(t)
	if err := probeUserNamespace(testSelf(t)); err != nil {
		t.Errorf("as root, probeUserNamespace = %v, want nil", err)
	}
	c := selfCommand(testSelf(t), argUserNamespaceProbe)
	// It mounts over the temporary folder: a folder of its own, not the
	// /tmp that holds the coverage counters.
	c.Env = append(helperEnviron(), "TMPDIR="+t.TempDir())
	c.SysProcAttr = mountNamespace()
	if out, err := c.CombinedOutput(); err != nil {
		t.Errorf("the probe failed: %v: %s", err, out)
	}
}

// TestProbeOverlaysRuns: the caches' probe mounts each overlay in a
// namespace of its own and says which the kernel refused; a probe that
// cannot run refuses them all.
func TestProbeOverlaysRuns(t *testing.T) {
	needRoot(t)
	helperInEnv(t)
	cache := t.TempDir()
	dir := filepath.Join(t.TempDir(), "caches")
	overlays, err := layout.MakeOverlays(dir, []plan.Cache{{Path: cache}, {Path: filepath.Join(cache, "gone")}}, false)
	if err != nil {
		t.Fatal(err)
	}
	refused := probeOverlays(testSelf(t), plan.Files{Overlays: overlays})
	if len(refused) != 2 || refused[0] != "" || refused[1] == "" {
		t.Errorf("refused %q, want the missing cache's overlay alone refused", refused)
	}
	for i, why := range probeOverlays(filepath.Join(t.TempDir(), "no-dsh-fs"), plan.Files{Overlays: overlays}) {
		if !strings.HasPrefix(why, "the probe failed: ") {
			t.Errorf("overlay %d: %q, want the probe's failure", i, why)
		}
	}
}

// TestProbeOverlaysInTmpfs: overlays whose upper and work folders a
// tmpfs holds (plan.Files.OverlayMemory) are probed in a tmpfs of the
// probe's own: allowed where the folder on disk is empty, which stays
// empty; a folder missing on disk refuses them all.
func TestProbeOverlaysInTmpfs(t *testing.T) {
	needRoot(t)
	helperInEnv(t)
	cache := t.TempDir()
	dir := filepath.Join(t.TempDir(), "caches")
	overlays, err := layout.MakeOverlays(dir, []plan.Cache{{Path: cache}, {Path: filepath.Join(cache, "gone")}}, true)
	if err != nil {
		t.Fatal(err)
	}
	f := plan.Files{Overlays: overlays, OverlayDir: dir, OverlayMemory: 1 << 20}
	refused := probeOverlays(testSelf(t), f)
	if len(refused) != 2 || refused[0] != "" || refused[1] == "" {
		t.Errorf("refused %q, want the missing cache's overlay alone refused", refused)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the overlays' folder on disk: %v, %v; want it empty", entries, err)
	}
	f.OverlayDir = filepath.Join(t.TempDir(), "missing")
	for i, why := range probeOverlays(testSelf(t), f) {
		if !strings.HasPrefix(why, "the overlays' tmpfs: ") {
			t.Errorf("overlay %d: %q, want the tmpfs's failure", i, why)
		}
	}
}

// TestProbesMountOnlyInTheirOwnNamespace: a probe run any way but the
// one exec runs it, in namespaces of its own (mountNamespace), mounts
// nothing: started by hand from a shell, the user-namespace probe would
// cover that shell's temporary folder with its 4 KiB tmpfs. The shell
// here lives in a private mount namespace of the test's, so a probe
// that mounts is seen there and nowhere else.
func TestProbesMountOnlyInTheirOwnNamespace(t *testing.T) {
	needRoot(t)
	unshare := lookPath(t, "unshare")
	tmp := t.TempDir()
	script := `TMPDIR="$1" "$0" ` + argUserNamespaceProbe + `; echo "status $?"; grep -c " $1 " /proc/self/mountinfo || true`
	c := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", script, testSelf(t), tmp)
	c.Env = helperEnviron()
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "status 1") || !strings.HasSuffix(strings.TrimSpace(string(out)), "\n0") {
		t.Errorf("a probe started from a shell, in the shell's own mount namespace: %s\nwant status 1 and nothing mounted on %s", out, tmp)
	}
}

// TestProbedOverlaysFallBackToDisk: overlays whose every one the kernel
// refuses over the tmpfs are made and probed on disk instead (a kernel
// whose tmpfs lacks what an overlay needs may allow them there); one
// allowed keeps them all in the tmpfs. The control: caches of which one
// is allowed stay in the tmpfs, nothing on disk.
func TestProbedOverlaysFallBackToDisk(t *testing.T) {
	needRoot(t)
	helperInEnv(t)
	cache := t.TempDir()
	pr := &probes{self: testSelf(t), fresh: true, base: t.TempDir()}
	for _, tc := range []struct {
		name   string
		caches []plan.Cache
		tmpfs  uint64
		onDisk []string
	}{
		{"one allowed", []plan.Cache{{Path: cache}, {Path: filepath.Join(cache, "gone")}}, 1 << 20, nil},
		{"every one refused", []plan.Cache{{Path: filepath.Join(cache, "gone")}}, 0, []string{"0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "caches")
			overlays, refused, _, tmpfs, err := probedOverlays(pr, dir, tc.caches, 1<<20)
			if err != nil || len(overlays) != len(tc.caches) || len(refused) != len(tc.caches) {
				t.Fatalf("probedOverlays: %v, %v, %v", overlays, refused, err)
			}
			if tmpfs != tc.tmpfs {
				t.Errorf("tmpfs %d, want %d", tmpfs, tc.tmpfs)
			}
			var names []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, " ") != strings.Join(tc.onDisk, " ") {
				t.Errorf("on disk in %s: %q, want %q", dir, names, tc.onDisk)
			}
		})
	}
}
