//go:build unix

package files

// ls --recursive walks by handle (issue 12): it goes deeper than
// PATH_MAX, an unreadable folder is an entry with an error rather than a
// failed call, and --limit stops the walk itself. These run the real
// command, since the properties are the process's: the system calls it
// makes, the user it runs as.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// lsResult is the part of an ls result these tests look at.
type lsResult struct {
	OK      bool `json:"ok"`
	Entries []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"entries"`
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

func decodeLs(t *testing.T, out string) lsResult {
	t.Helper()
	var res lsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("ls result is not JSON: %v\n%.500s", err, out)
	}
	return res
}

// mkdirChain makes depth nested folders below dir by handle (mkdirat in
// the folder made before, never a path), each name width bytes, and a
// file leaf.txt in the deepest. It returns the names, top first.
func mkdirChain(t *testing.T, dir string, depth, width int) []string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range depth {
		name := fmt.Sprintf("%0*d", width, i)
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd, names = next, append(names, name)
	}
	leaf, err := unix.Openat(fd, "leaf.txt", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(leaf)
	unix.Close(fd)
	return names
}

// TestLsDeeperThanPathMax lists a tree whose deepest path is longer than
// PATH_MAX: every folder is listed, by its handle, and the deepest file
// is there; nothing fails, nothing is an error entry.
func TestLsDeeperThanPathMax(t *testing.T) {
	bin := harness.Bin(t)
	ws := t.TempDir()
	const depth, width = 250, 20
	names := mkdirChain(t, ws, depth, width)
	deepest := strings.Join(names, "/") + "/leaf.txt"
	if len(ws)+len(deepest) <= unix.PathMax {
		t.Fatalf("the tree is only %d bytes deep", len(ws)+len(deepest))
	}
	code, _, out, errs := harness.Run(t, harness.Cmd(bin, harness.Env(t, ws), ws, "ls", "--recursive"), nil)
	if code != 0 {
		t.Fatalf("ls --recursive: exit %d\nstdout: %.500s\nstderr: %s", code, out, errs)
	}
	res := decodeLs(t, out)
	if len(res.Entries) != depth+1 || res.Total != depth+1 || res.Truncated {
		t.Errorf("%d entries, total %d, truncated %v; want %d, not truncated", len(res.Entries), res.Total, res.Truncated, depth+1)
	}
	for _, e := range res.Entries {
		if e.Error != nil {
			t.Errorf("entry of %d bytes has an error: %+v", len(e.Name), *e.Error)
			break
		}
	}
	if last := res.Entries[len(res.Entries)-1]; last.Name != deepest || last.Type != "file" {
		t.Errorf("last entry %.80q… (%d bytes, %s), want the leaf (%d bytes)", last.Name, len(last.Name), last.Type, len(deepest))
	}
}

// TestLsLimitStopsTheWalk lists a tree of some 1800 entries with
// --limit 3. The walk stops there: the result's total is a lower bound
// well below the tree's size, and, counted by strace, the call looks at
// (newfstatat) no more than the limit's entries and reads (getdents64) a
// couple of folders, where the whole walk looks at every entry and reads
// every folder. Counting system calls is independent of the machine's
// speed.
func TestLsLimitStopsTheWalk(t *testing.T) {
	bin := harness.Bin(t)
	base := t.TempDir()
	ws, empty := filepath.Join(base, "ws"), filepath.Join(base, "empty")
	const folders, files, limit = 30, 60, 3
	tree := map[string]string{}
	for d := range folders {
		for f := range files {
			tree[fmt.Sprintf("ws/d%02d/f%02d.txt", d, f)] = "x\n"
		}
	}
	tree["empty/.keep"] = ""
	harness.WriteTree(t, base, tree)
	size := folders * (files + 1)
	env := harness.Env(t, ws)

	code, _, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "ls", ws, "--recursive", "--limit", fmt.Sprint(limit)), nil)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	res := decodeLs(t, out)
	if len(res.Entries) != limit || !res.Truncated {
		t.Errorf("%d entries, truncated %v; want %d, truncated", len(res.Entries), res.Truncated, limit)
	}
	// The top folder and the one folder the walk went into are counted,
	// nothing else.
	if res.Total < limit+1 || res.Total > folders+files {
		t.Errorf("total %d: want a lower bound between %d and %d (the tree has %d entries)", res.Total, limit+1, folders+files, size)
	}

	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace: the system calls are not counted")
	}
	count := func(args ...string) map[string]int {
		t.Helper()
		log := filepath.Join(base, "strace.log")
		argv := append([]string{"-f", "-qq", "-e", "trace=getdents64,newfstatat,statx,openat", "-o", log, bin}, args...)
		c := exec.Command(strace, argv...)
		c.Env, c.Dir = env, ws
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = io.Discard, &stderr
		if err := c.Run(); err != nil {
			t.Skipf("strace cannot trace here (%v): %s", err, stderr.String())
		}
		f, err := os.Open(log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := map[string]int{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			_, call, _ := strings.Cut(sc.Text(), " ")
			if name, _, ok := strings.Cut(strings.TrimSpace(call), "("); ok {
				n[name]++
			}
		}
		return n
	}
	// The same call on an empty folder at the same depth is the
	// baseline: what the process does whatever it lists.
	baseline := count("ls", empty, "--recursive", "--limit", fmt.Sprint(limit))
	limited := count("ls", ws, "--recursive", "--limit", fmt.Sprint(limit))
	whole := count("ls", ws, "--recursive", "--limit", fmt.Sprint(2*size))
	extra := func(n map[string]int, call string) int { return n[call] - baseline[call] }
	t.Logf("baseline %v; --limit %d %v; whole walk %v", baseline, limit, limited, whole)
	if got := extra(limited, "newfstatat") + extra(limited, "statx"); got > limit+1 {
		t.Errorf("--limit %d looked at %d entries (newfstatat, statx beyond the baseline), want at most %d", limit, got, limit+1)
	}
	if got := extra(limited, "getdents64"); got > 2*(limit+1) {
		t.Errorf("--limit %d made %d folder reads (getdents64 beyond the baseline), want at most %d", limit, got, 2*(limit+1))
	}
	if got := extra(limited, "openat"); got > limit+1 {
		t.Errorf("--limit %d opened %d folders (openat beyond the baseline), want at most %d", limit, got, limit+1)
	}
	// The count would show a walk that did not stop: the whole walk
	// looks at every entry and reads every folder.
	if got := extra(whole, "newfstatat") + extra(whole, "statx"); got < size {
		t.Errorf("the whole walk looked at %d entries, want at least %d: the count does not see the walk", got, size)
	}
	if got := extra(whole, "getdents64"); got < folders {
		t.Errorf("the whole walk made %d folder reads, want at least %d", got, folders)
	}
}

// TestLsUnreadableFolder lists a tree with a folder the caller may not
// read: it is an entry with an error (FS_PERMISSION), the rest of the
// tree is listed, the call succeeds and its result matches the schema.
// Root reads any folder whatever its mode, so as root the call runs as
// harness.Nobody (uid 65534), from a copy of the binary harness.Nobody can run; the
// testscript ls_recursive_unreadable checks the same for other users.
func TestLsUnreadableFolder(t *testing.T) {
	bin := harness.Bin(t)
	base := t.TempDir()
	// t.TempDir's folders are private: let harness.Nobody in.
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(base, "ws")
	harness.WriteTree(t, base, map[string]string{
		"ws/a.txt":            "a\n",
		"ws/locked/inner.txt": "hidden by its folder's mode\n",
		"ws/z/ok.txt":         "z\n",
		"home/.keep":          "",
	})
	if err := os.Chmod(filepath.Join(ws, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "locked"), 0o755) })

	env := []string{"PATH=" + os.Getenv("PATH"), "DSH_FS_CWD=" + ws, "DSH_FS_TMP=false",
		"HOME=" + filepath.Join(base, "home"), "XDG_CONFIG_HOME=" + filepath.Join(base, "home", "none"),
		"GORACE=atexit_sleep_ms=0"}
	c := harness.Cmd(bin, env, ws, "ls", "--recursive")
	if os.Geteuid() == 0 {
		// A copy harness.Nobody can run, named dsh-fs as testscript.Main wants.
		nobodyBin := filepath.Join(base, "bin", "dsh-fs")
		harness.CopyExecutable(t, bin, nobodyBin)
		c = harness.Cmd(nobodyBin, env, ws, "ls", "--recursive")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	code, _, out, errs := harness.Run(t, c, nil)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	res := decodeLs(t, out)
	got := map[string]string{}
	for _, e := range res.Entries {
		got[e.Name] = e.Type
		if e.Error != nil {
			got[e.Name] += " " + e.Error.Code + " " + e.Error.Message
		}
	}
	want := map[string]string{
		"a.txt":    "file",
		"locked":   "dir FS_PERMISSION open: permission denied",
		"z":        "dir",
		"z/ok.txt": "file",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries %v\nwant    %v", got, want)
	}
	if res.Total != 4 || res.Truncated {
		t.Errorf("total %d, truncated %v; want 4, false", res.Total, res.Truncated)
	}
	harness.Validate(t, harness.Schemas(t)["result-ls.json"], "result-ls.json", strings.TrimSpace(out))
}
