package files

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/fserr"
)

// The path cases of issue 22, crossed with the operations that take a
// path on the CLI (move and mkdir are MCP's only, and patch does not
// exist yet: mcp_paths_test.go runs the same cases through
// dsh-fs mcp). For every pair the contract's invariants hold: one JSON
// result, a stable error code whose exit status is nonzero, nothing
// outside the workspace or in its .git changed, and the outside secret's
// content never shown to a write or edit.

// pathLeads says where a path case leads, which decides what the
// contract lets a call do there.
type pathLeads int

const (
	// leadsInside: into the workspace, or nowhere (a loop, a dangling
	// link, a name too long): any stable outcome will do.
	leadsInside pathLeads = iota
	// leadsOutside: outside the workspace. A write is FS_SANDBOX_DENIED;
	// over MCP a read is refused too (reads stay within the allowed
	// folders).
	leadsOutside
	// leadsGit: into a protected part of the workspace's .git (config
	// or hooks/, protected whichever rule for the rest of .git holds).
	// A write is FS_SANDBOX_DENIED.
	leadsGit
)

// pathLayout is the tree the cases name: the workspace, a folder outside
// it, and the pid of another process whose /proc/PID/root the cases
// go through.
type pathLayout struct {
	ws, outside string
	otherPid    int
}

// pathCase is a path to give, relative to the workspace unless absolute.
type pathCase struct {
	name  string
	path  func(l pathLayout) string
	leads pathLeads
}

// deniedWrite says the contract refuses a mutation there
// (FS_SANDBOX_DENIED): it leads outside the roots or into .git.
func (c pathCase) deniedWrite() bool { return c.leads != leadsInside }

var pathCases = []pathCase{
	{"dot-dot out", func(l pathLayout) string { return "../outside/keep.txt" }, leadsOutside},
	{"absolute outside", func(l pathLayout) string { return filepath.Join(l.outside, "keep.txt") }, leadsOutside},
	{"double slash", func(l pathLayout) string { return "/" + l.ws + "//f.txt" }, leadsInside},
	{"trailing slash", func(l pathLayout) string { return "f.txt/" }, leadsInside},
	{"symlink in", func(l pathLayout) string { return "in" }, leadsInside},
	{"symlink out", func(l pathLayout) string { return "out" }, leadsOutside},
	{"symlink folder out", func(l pathLayout) string { return "outdir/keep.txt" }, leadsOutside},
	// Folders, for what lists and searches them (ls, find, grep).
	{"dot-dot folder out", func(l pathLayout) string { return "../outside" }, leadsOutside},
	{"symlink to folder out", func(l pathLayout) string { return "outdir" }, leadsOutside},
	{"symlink loop", func(l pathLayout) string { return "loop" }, leadsInside},
	{"symlink dangling", func(l pathLayout) string { return "dangling" }, leadsInside},
	{"symlink chain", func(l pathLayout) string { return "chain" }, leadsInside},
	// A dangling link out would have a write create its target outside.
	{"symlink dangling out", func(l pathLayout) string { return "danglingout" }, leadsOutside},
	{"symlink chain out", func(l pathLayout) string { return "chainout" }, leadsOutside},
	{"proc self root", func(l pathLayout) string { return "/proc/self/root" + filepath.Join(l.outside, "keep.txt") }, leadsOutside},
	{"proc self fd", func(l pathLayout) string { return "/proc/self/fd/0" }, leadsOutside},
	// The magic link of another process: the kernel would follow it to
	// that process's root; the fence resolves its text ("/") itself.
	{"proc pid root outside", func(l pathLayout) string {
		return "/proc/" + strconv.Itoa(l.otherPid) + "/root" + filepath.Join(l.outside, "keep.txt")
	}, leadsOutside},
	{"proc pid root inside", func(l pathLayout) string {
		return "/proc/" + strconv.Itoa(l.otherPid) + "/root" + filepath.Join(l.ws, "f.txt")
	}, leadsInside},
	{"proc pid root folder outside", func(l pathLayout) string {
		return "/proc/" + strconv.Itoa(l.otherPid) + "/root" + l.outside
	}, leadsOutside},
	{"proc pid root folder inside", func(l pathLayout) string {
		return "/proc/" + strconv.Itoa(l.otherPid) + "/root" + filepath.Join(l.ws, "sub")
	}, leadsInside},
	{"into .git", func(l pathLayout) string { return ".git/config" }, leadsGit},
	{"into .git hooks", func(l pathLayout) string { return ".git/hooks/pre-commit" }, leadsGit},
	{"beyond PATH_MAX", func(l pathLayout) string { return strings.Repeat("d/", 2100) + "f" }, leadsInside},
	{"newline in name", func(l pathLayout) string { return "new\nline.txt" }, leadsInside},
	{"invalid UTF-8", func(l pathLayout) string { return "bad\xff.txt" }, leadsInside},
}

var pathOps = []struct {
	name  string
	args  func(p string) []string
	write bool
	// stdin, when set, is the call's standard input (a patch).
	stdin func(p string) string
}{
	{"read", func(p string) []string { return []string{"read", p} }, false, nil},
	{"stat", func(p string) []string { return []string{"stat", p} }, false, nil},
	{"ls", func(p string) []string { return []string{"ls", p} }, false, nil},
	{"grep", func(p string) []string { return []string{"grep", "keep", p} }, false, nil},
	{"find", func(p string) []string { return []string{"find", "**", p, "--no-ignore"} }, false, nil},
	{"write", func(p string) []string { return []string{"write", p, "--content", "x\n"} }, true, nil},
	{"edit", func(p string) []string { return []string{"edit", p, "--old", "keep", "--new", "gone"} }, true, nil},
	{"write --mkdir", func(p string) []string { return []string{"write", p, "--content", "x\n", "--mkdir"} }, true, nil},
	{"patch add", func(string) []string { return []string{"patch", "--from", "-"} }, true,
		func(p string) string { return "*** Begin Patch\n*** Add File: " + p + "\n+x\n*** End Patch\n" }},
	{"patch update", func(string) []string { return []string{"patch", "--from", "-"} }, true,
		func(p string) string {
			return "*** Begin Patch\n*** Update File: " + p + "\n@@\n-keep inside\n+gone\n*** End Patch\n"
		}},
	{"patch delete", func(string) []string { return []string{"patch", "--from", "-"} }, true,
		func(p string) string { return "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch\n" }},
}

// stableCodes is every error code of the one table in internal/fserr.
func stableCodes() []string {
	codes := []string{}
	for _, c := range []fserr.Code{fserr.SandboxDenied, fserr.NotFound, fserr.IsDir, fserr.NotDir, fserr.Binary,
		fserr.TooLarge, fserr.EditNoMatch, fserr.EditAmbiguous, fserr.Stale, fserr.Exists, fserr.Permission,
		fserr.NoSpace, fserr.InvalidArgument, fserr.ConfigInvalid, fserr.IO} {
		codes = append(codes, string(c))
	}
	return codes
}

// makePathLayout makes the tree the path cases name beneath a fresh
// canonical folder, and starts the other process (a sleep, ended with
// the test).
func makePathLayout(t *testing.T) pathLayout {
	t.Helper()
	base := harness.CanonicalTemp(t)
	l := pathLayout{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	harness.WriteTree(t, base, map[string]string{
		"outside/keep.txt":          "keep outside-secret\n",
		"ws/.git/HEAD":              "ref: refs/heads/main\n",
		"ws/.git/config":            "[core]\n",
		"ws/.git/hooks/pre-commit":  "#!/bin/sh\nkeep\n",
		"ws/.git/hooks/post-commit": "#!/bin/sh\n",
	})
	resetPathWorkspace(t, l)
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatalf("start the other process: %v", err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	l.otherPid = sleep.Process.Pid
	return l
}

// resetPathWorkspace puts the workspace back as the cases expect it,
// all but its .git (which must never change): each call starts from the
// same tree, whatever the call before it did.
func resetPathWorkspace(t *testing.T, l pathLayout) {
	t.Helper()
	entries, err := os.ReadDir(l.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(l.ws, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	harness.WriteTree(t, l.ws, map[string]string{"f.txt": "keep inside\n", "mover.txt": "moved in\n", "sub/g.txt": "keep sub\n"})
	for name, to := range map[string]string{"in": "f.txt", "out": "../outside/keep.txt", "outdir": "../outside",
		"loop": "loop", "dangling": "nowhere", "chain": "in", "danglingout": "../outside/new.txt", "chainout": "out"} {
		if err := os.Symlink(to, filepath.Join(l.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// guardedState is what no call may change: the outside folder, and the
// parts of .git that stay protected under every rule (config, hooks/).
func guardedState(t *testing.T, l pathLayout) string {
	t.Helper()
	return treeState(t, l.outside) + treeState(t, filepath.Join(l.ws, ".git", "config")) +
		treeState(t, filepath.Join(l.ws, ".git", "hooks"))
}

// treeState is every entry beneath dir with its mode, size and content.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		fmt.Fprintf(&b, "%q %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %s", harness.SHA256Hex(data))
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

func TestPathTable(t *testing.T) {
	harness.RequireLandlock(t)
	l := makePathLayout(t)
	codes := stableCodes()
	guarded := guardedState(t, l)
	bin, env := harness.Bin(t), harness.Env(t, l.ws)
	for _, pc := range pathCases {
		for _, op := range pathOps {
			resetPathWorkspace(t, l)
			p := pc.path(l)
			var stdin io.Reader
			if op.stdin != nil {
				stdin = strings.NewReader(op.stdin(p))
			}
			code, res, stdout, stderr := harness.Run(t, harness.Cmd(bin, env, l.ws, append(op.args(p), "--tmp=false")...), stdin)
			where := fmt.Sprintf("%s %s (%q)", op.name, pc.name, p)
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &line); err != nil {
				t.Errorf("%s: not one JSON result (%v): %q %s", where, err, stdout, stderr)
				continue
			}
			switch {
			case res.OK && code != 0:
				t.Errorf("%s: ok with exit status %d", where, code)
			case !res.OK && (code == 0 || !slices.Contains(codes, res.Error.Code)):
				t.Errorf("%s: failed with code %q, exit status %d: %s", where, res.Error.Code, code, stdout)
			case op.write && pc.deniedWrite() && res.Error.Code != string(fserr.SandboxDenied):
				t.Errorf("%s: want FS_SANDBOX_DENIED, got ok=%v %q: %s", where, res.OK, res.Error.Code, stdout)
			}
			if op.write && strings.Contains(stdout, "outside-secret") {
				t.Errorf("%s: a mutation showed the outside file: %s", where, stdout)
			}
			if got := guardedState(t, l); got != guarded {
				t.Fatalf("%s changed the outside folder or .git:\nbefore:\n%s\nafter:\n%s", where, guarded, got)
			}
		}
	}
}
