//go:build windows

package fsops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/fsys/fsystest"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The file tool through the fence on Windows, with Windows' spellings of
// paths: the path table's rows. On this project's Linux machines these
// run under Wine (GOOS=windows go test -exec …/wine-exec
// ./internal/fsops), which approximates Windows.

// winWorkspace is a new folder holding ws (the workspace, with a .git
// folder), proj2 beside it, and the fence of a workspace-write session
// in ws. The folders are left behind: under Wine 8 Go's os.RemoveAll
// fails (no FileDispositionInformationEx), so t.TempDir cannot be used.
func winWorkspace(t *testing.T) (base, ws string, f *sandbox.Fence) {
	t.Helper()
	base, err := os.MkdirTemp("", "fsops")
	if err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(base, "ws2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f = sandbox.NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever})
	return base, ws, f
}

func winWrite(f *sandbox.Fence, path, content string) error {
	t, err := f.Resolve(path)
	if err != nil {
		return err
	}
	_, err = Write(f, t, WriteOptions{Content: strings.NewReader(content)})
	return err
}

// TestWindowsReadWriteEdit: write, read, edit and list through the
// fence, by a relative path, a drive path and a \\?\ path; CRLF kept.
func TestWindowsReadWriteEdit(t *testing.T) {
	_, ws, f := winWorkspace(t)
	for _, p := range []string{`a.txt`, filepath.Join(ws, "b.txt"), `\\?\` + filepath.Join(ws, "c.txt"), `sub\..\d.txt`} {
		if err := winWrite(f, p, "one\r\ntwo\r\n"); err != nil {
			t.Errorf("write %s: %v", p, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	if err != nil || string(got) != "one\r\ntwo\r\n" {
		t.Fatalf("a.txt on disk: %q, %v", got, err)
	}
	tgt, err := f.Resolve("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(f, tgt, ReadOptions{Limit: 100, MaxBytes: 1 << 20})
	if err != nil || !strings.Contains(r.Content, "two") {
		t.Fatalf("read a.txt: %+v, %v", r, err)
	}
	if _, err := Edit(f, tgt, EditOptions{Edits: []Replacement{{Old: "two", New: "three"}}}); err != nil {
		if !replacesHeldFile(t, ws) {
			// An edit renames its new file over the one it holds locked.
			t.Logf("edit a.txt: %v: this volume cannot replace a file held open (no POSIX rename: Wine 8, FAT, Windows before 10 1709)", err)
		} else {
			t.Fatalf("edit a.txt: %v", err)
		}
	} else if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != "one\r\nthree\r\n" {
		t.Errorf("a.txt after the edit: %q, want CRLF kept", got)
	}
	dot, _ := f.Resolve(".")
	l, err := List(f, dot, ListOptions{All: true, Limit: 100})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	if want := "a.txt b.txt c.txt d.txt"; !strings.Contains(strings.Join(names, " "), want) {
		t.Errorf("list: %v, want %s among them", names, want)
	}
}

// replacesHeldFile reports whether a rename in dir replaces a file held
// open (POSIX rename semantics).
func replacesHeldFile(t *testing.T, dir string) bool {
	p, _ := fsys.FromOS(dir)
	dfd, err := fsys.Open(p, fsys.O_PATH|fsys.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close(dfd)
	for _, n := range []string{"probe-a", "probe-b"} {
		fd, err := fsys.Openat(dfd, n, fsys.O_RDWR|fsys.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if n == "probe-b" {
			fsys.Close(fd)
			continue
		}
		defer fsys.Close(fd)
	}
	return fsys.Renameat(dfd, "probe-b", dfd, "probe-a") == nil
}

// TestWindowsPathTable: each spelling of a path Windows reads as another
// file, a stream, a device, a share or another case is refused or is
// what it names, and nothing is written outside the workspace or into a
// protected path.
func TestWindowsPathTable(t *testing.T) {
	base, ws, f := winWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	const (
		invalid = fserr.InvalidArgument
		denied  = fserr.SandboxDenied
		written = fserr.Code("")
	)
	for _, tc := range []struct {
		path string
		want fserr.Code // the error's code; written for none
	}{
		{`file.txt:secret`, invalid}, // an alternate data stream
		{`file.txt::$DATA`, invalid},
		{`file.txt.`, invalid}, // trailing dot and space: Win32 drops them
		{`file.txt `, invalid},
		{`CON`, invalid}, // devices, in any folder, with any extension
		{`nul.txt`, invalid},
		{`sub\COM1`, invalid},
		{`\\server\share\x.txt`, invalid}, // a network share
		{`\\?\UNC\server\share\x.txt`, invalid},
		{`\\.\PhysicalDrive0`, invalid},               // a device path
		{`C:x.txt`, invalid},                          // relative to C:'s own current folder
		{`..\ws2\x.txt`, denied},                      // beside the workspace: ws2 is not beneath ws
		{filepath.Join(base, "ws2", "y.txt"), denied}, // the same by its drive path
		{`.git\config`, denied},                       // protected
		{`.GIT\CONFIG`, denied},                       // protected, in another case
		{`.Git\hooks\pre-commit`, denied},             // protected, in another case
		{`FILE.TXT`, fserr.Exists},                    // the same file as file.txt: it exists (FS_EXISTS)
		{`c:` + strings.TrimPrefix(filepath.Join(ws, "lower.txt"), "C:"), written}, // the drive in lower case
	} {
		err := winWrite(f, tc.path, "w")
		if got := fserr.CodeOf(err); err == nil && tc.want != written || err != nil && got != tc.want {
			t.Errorf("write %q: %v (%s), want %s", tc.path, err, got, map[bool]string{true: "written", false: string(tc.want)}[tc.want == written])
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(got) != "[core]\n" {
		t.Errorf(".git/config was changed: %q", got)
	}
	for _, p := range []string{filepath.Join(base, "ws2", "x.txt"), filepath.Join(base, "ws2", "y.txt"), filepath.Join(ws, ".git", "hooks")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		if n := e.Name(); strings.ContainsAny(n, ":") || strings.HasSuffix(n, ".") || strings.HasSuffix(n, " ") ||
			strings.EqualFold(n, "CON") || strings.EqualFold(n, "nul.txt") {
			t.Errorf("%q was made in the workspace", n)
		}
	}
}

// TestWindowsShortName: the workspace named by its 8.3 alias is the same
// root, and what is written there is decided on by its long name.
func TestWindowsShortName(t *testing.T) {
	base, err := os.MkdirTemp("", "fsops")
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(base, "a long workspace")
	if err := os.MkdirAll(filepath.Join(long, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	u, _ := windows.UTF16PtrFromString(long)
	buf := make([]uint16, 1024)
	n, err := windows.GetShortPathName(u, &buf[0], uint32(len(buf)))
	short := windows.UTF16ToString(buf[:n])
	if err != nil || strings.EqualFold(short, long) {
		t.Skipf("no 8.3 alias of %s here (%q, %v)", long, short, err)
	}
	f := sandbox.NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: short, Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever})
	if err := winWrite(f, filepath.Join(long, "by-long.txt"), "x"); err != nil {
		t.Errorf("write by the long name into the workspace named short (%s): %v", short, err)
	}
	if err := winWrite(f, `.git\config`, "x"); err == nil {
		t.Errorf("write .git\\config in the workspace named short: written, want protected")
	}
	tgt, err := f.Resolve("x.txt")
	if err != nil || !strings.Contains(tgt.Path, "a long workspace") {
		t.Errorf("the canonical path of x.txt: %q, %v; want the long name", tgt.Path, err)
	}
}

// TestWindowsSwapDuringWrite is the race test's Windows form: between the
// fence's resolution of sub\x.txt and the write, sub is swapped for a
// junction (or a directory symlink) to a folder outside the workspace.
// A naive write by the path lands outside (the control); the fence's,
// which opens each name beneath its folder's handle and never follows a
// reparse point, does not. Where links cannot be made (Wine 8 makes
// neither), it skips with the reason.
func TestWindowsSwapDuringWrite(t *testing.T) {
	for _, kind := range []string{"junction", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			base, ws, f := winWorkspace(t)
			outside := filepath.Join(base, "ws2")
			sub := filepath.Join(ws, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			tgt, err := f.Resolve(`sub\x.txt`)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(sub, sub+".old"); err != nil {
				t.Fatal(err)
			}
			if err := makeLink(kind, sub, outside); err != nil {
				t.Skipf("cannot make a %s here: %v", kind, err)
			}
			// The control: a write by the path goes through the link.
			if err := os.WriteFile(filepath.Join(sub, "control.txt"), []byte("c"), 0o644); err != nil {
				t.Fatalf("the naive write failed (%v): the control shows nothing", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "control.txt")); err != nil {
				t.Fatalf("the naive write did not land outside (%v): the control shows nothing", err)
			}
			_, err = Write(f, tgt, WriteOptions{Content: strings.NewReader("x")})
			if _, serr := os.Stat(filepath.Join(outside, "x.txt")); serr == nil {
				t.Fatalf("the fence's write landed outside, through the %s (write: %v)", kind, err)
			}
			if err == nil {
				t.Errorf("the write through the swapped %s succeeded", kind)
			}
		})
	}
}

// makeLink makes link a junction or a directory symlink to the folder
// target, and checks it is there as a link.
func makeLink(kind, link, target string) error {
	var err error
	if kind == "junction" {
		err = fsystest.MakeJunction(link, target)
	} else {
		from, _ := windows.UTF16PtrFromString(link)
		to, _ := windows.UTF16PtrFromString(target)
		err = windows.CreateSymbolicLink(from, to, windows.SYMBOLIC_LINK_FLAG_DIRECTORY|0x2 /* ALLOW_UNPRIVILEGED_CREATE */)
	}
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&(os.ModeSymlink|os.ModeIrregular) == 0 {
		return fmt.Errorf("made, but not there as a link (%v)", err)
	}
	return nil
}

// TestWindowsRootsFromOSSpelling: the writable roots of a policy as
// Windows spells it (what dsh-fs policy and --writable-root hand the
// fence) are derived, and end. Under Wine `dsh-fs policy` and
// `--writable-root ..` looped forever: each walk up from `C:\…\ws` met
// path.Dir's "." and never the "/" it waited for.
func TestWindowsRootsFromOSSpelling(t *testing.T) {
	base, ws, _ := winWorkspace(t)
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever, Workspaces: []string{filepath.Join(base, "elsewhere")}}
	refused, err := sandbox.RefusedRoots(p)
	if err != nil || len(refused) == 0 || refused[0].Origin != "cwd" {
		t.Fatalf("refused roots: %+v, %v: want the cwd outside the workspaces", refused, err)
	}
	p.Workspaces = nil
	roots, err := sandbox.WritableRoots(p)
	if err != nil || len(roots) == 0 || fsys.ToOS(roots[0].Path) != ws {
		t.Fatalf("writable roots: %+v, %v: want %s first", roots, err, ws)
	}
	for dir, want := range map[string]bool{filepath.Join(ws, ".git"): true, filepath.Join(base, "ws2"): false} {
		if ok, err := sandbox.AllowsSessionRoot(p, dir); err != nil || ok != want {
			t.Errorf("AllowsSessionRoot(%s) = %t, %v; want %t", dir, ok, err, want)
		}
	}
}

// TestWindowsBeneathOSSpelling: sandbox.Beneath takes the canonical paths
// sandbox.Canonical gives, which are Windows' spelling there. Under Wine
// `--cwd $WORK/ws/sub` beneath a trusted cwd $WORK/ws was refused as a
// widening: C:\…\ws\sub was not beneath C:\…\ws by slash components.
func TestWindowsBeneathOSSpelling(t *testing.T) {
	for _, c := range []struct {
		root, target string
		want         bool
	}{
		{`C:\ws`, `C:\ws\sub`, true}, {`C:\ws`, `C:\ws`, true}, {`C:\ws`, `C:\ws2`, false},
		{`C:\ws`, "/C:/ws/sub", true}, {"/C:/ws", `C:\ws\sub`, true}, {`C:\ws\sub`, `C:\ws`, false},
	} {
		if got := sandbox.Beneath(c.root, c.target); got != c.want {
			t.Errorf("Beneath(%s, %s) = %t, want %t", c.root, c.target, got, c.want)
		}
	}
}

// TestWindowsTempRoot: with tmp on, the user's own temporary folder
// (%LOCALAPPDATA%\Temp, from the known folder) is a writable root, as
// /tmp is on Unix, and a write there through the fence succeeds; TMP
// and TEMP, which a call sets, name a root only beneath an allowed one,
// and their refusal names the variable.
func TestWindowsTempRoot(t *testing.T) {
	base, ws, _ := winWorkspace(t)
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		t.Skipf("no LocalAppData known folder here: %v", err)
	}
	userTemp := filepath.Join(local, "Temp")
	elsewhere := filepath.Join(base, "ws2")
	t.Setenv("TMP", elsewhere)
	t.Setenv("TEMP", elsewhere)
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Tmp: true, Protected: policy.DefaultProtected,
		MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever}
	roots, err := sandbox.WritableRoots(p)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, r := range roots {
		if r.Origin == "tmp" {
			tmp = append(tmp, fsys.ToOS(r.Path))
		}
	}
	if len(tmp) != 1 || !strings.EqualFold(tmp[0], userTemp) {
		t.Fatalf("tmp roots %q, want the user's temp folder %s alone", tmp, userTemp)
	}
	refused, err := sandbox.RefusedRoots(p)
	if err != nil || len(refused) != 1 || refused[0].Origin != "tmp" || refused[0].Matched != "TMP="+elsewhere {
		t.Fatalf("refused %+v, %v: want TMP's folder refused, named TMP=%s", refused, err, elsewhere)
	}
	if err := os.MkdirAll(userTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(userTemp, fmt.Sprintf("dsh-fs-temp-root-%d.txt", os.Getpid()))
	defer os.Remove(name)
	if err := winWrite(sandbox.NewFence(p), name, "t"); err != nil {
		t.Fatalf("write in the user's temp folder: %v", err)
	}
	if err := winWrite(sandbox.NewFence(p), filepath.Join(elsewhere, "x.txt"), "x"); fserr.CodeOf(err) != fserr.SandboxDenied {
		t.Fatalf("write in TMP's folder outside the roots: %v, want FS_SANDBOX_DENIED", err)
	}
}
