//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestOpenDirForgedVerdict: the confined open decides again on the path
// as it resolves now, whatever verdict the Target carries. A Target
// whose unexported verdict claims "/" (or the workspace) as its writable
// root, as only code inside the package could forge it, is refused for a
// path outside the roots or in a protected path, and nothing is made.
func TestOpenDirForgedVerdict(t *testing.T) {
	base := tempRoot(t)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever})
	for _, tc := range []struct {
		name   string
		target Target
		reason string
	}{
		{"outside, claiming / as its root", Target{Given: outside + "/new/x", Path: outside + "/new/x", root: "/", rel: outside[1:] + "/new/x"}, policy.ReasonOutsideRoots},
		{"protected, claiming the workspace", Target{Given: ws + "/.git/hooks/x", Path: ws + "/.git/hooks/x", root: ws, rel: ".git/hooks/x"}, policy.ReasonProtected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := f.openDir("write", tc.target, true)
			if d != nil {
				d.Close()
			}
			var denied *policy.DeniedError
			if !errors.As(err, &denied) || denied.Reason != tc.reason {
				t.Errorf("openDir = %v; want a denial (%s)", err, tc.reason)
			}
			for _, p := range []string{outside + "/new", ws + "/.git/hooks"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("openDir made %s", p)
				}
			}
		})
	}
}

// TestRemove: a file, a symlink (not what it names) and an empty folder
// are removed through the confined folder; a folder that holds something,
// a missing name, a protected path, a path outside the roots and a path
// through a symlink out are refused with their codes, and nothing else
// changes.
func TestRemove(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string // relative to ws
		code   fserr.Code
		folder bool
		gone   string // relative to the temp root: what must be gone afterwards
		kept   []string
	}{
		{name: "file", path: "f", gone: "ws/f"},
		{name: "symlink, not its target", path: "link", gone: "ws/link", kept: []string{"out/x"}},
		{name: "empty folder", path: "empty", folder: true, gone: "ws/empty"},
		{name: "folder with something", path: "d", code: fserr.IsDir, kept: []string{"ws/d/g"}},
		{name: "missing", path: "nope", code: fserr.NotFound},
		{name: "protected", path: ".git/config", code: fserr.SandboxDenied, kept: []string{"ws/.git/config"}},
		{name: "outside", path: "../out/x", code: fserr.SandboxDenied, kept: []string{"out/x"}},
		{name: "through a symlink out", path: "outdir/y", code: fserr.SandboxDenied, kept: []string{"out/sub/y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, canonLayout...)
			makeLayout(t, root, "ws/link => ../out/x", "ws/empty/", "ws/.git/", "ws/.git/config", "ws/outdir => ../out/sub")
			ws := filepath.Join(root, "ws")
			f := NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever})
			target, err := f.ResolveName(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			typ, err := f.Remove("rm", target, Intent{})
			folder := typ == unix.S_IFDIR
			if c := codeOf(err); c != tc.code {
				t.Fatalf("Remove(%s) = %v (%s), want code %q", tc.path, err, c, tc.code)
			}
			if err == nil && folder != tc.folder {
				t.Errorf("Remove(%s) says folder %v, want %v", tc.path, folder, tc.folder)
			}
			if tc.gone != "" {
				if _, err := os.Lstat(filepath.Join(root, tc.gone)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s still there (%v)", tc.gone, err)
				}
			}
			for _, k := range tc.kept {
				if _, err := os.Lstat(filepath.Join(root, k)); err != nil {
					t.Errorf("%s is gone: %v", k, err)
				}
			}
		})
	}
}

// codeOf is err's code, "" for no error.
func codeOf(err error) fserr.Code {
	if err == nil {
		return ""
	}
	return fserr.CodeOf(err)
}

// TestLockDecidesOnWhatItLocked: Lock holds only a regular file, and
// decides deny_read on the file it locked, not on the name it was
// given: a hard link in the workspace to a file under deny_read is
// denied like the file. A missing target is held with no file.
func TestLockDecidesOnWhatItLocked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string // added to canonLayout
		path   string   // relative to ws
		link   string   // hard link path → existing file, both relative to the temp root
		fifo   string   // a FIFO made at this path, relative to the temp root
		code   fserr.Code
		exists bool
	}{
		{name: "a file", path: "f", exists: true},
		{name: "missing", path: "new"},
		{name: "a folder", path: "d", code: fserr.IsDir},
		{name: "a fifo", path: "p", fifo: "ws/p", code: fserr.InvalidArgument},
		{name: "a hard link to a denied file", path: "h", link: "ws/h=out/x", code: fserr.SandboxDenied},
		{name: "through a symlink to a denied file", layout: []string{"ws/l => ../out/x"}, path: "l", code: fserr.SandboxDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, canonLayout...)
			makeLayout(t, root, tc.layout...)
			if tc.link != "" {
				name, old, _ := strings.Cut(tc.link, "=")
				if err := os.Link(filepath.Join(root, old), filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.fifo != "" {
				if err := unix.Mkfifo(filepath.Join(root, tc.fifo), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := testPolicy(root, policy.WorkspaceWrite)
			p.DenyRead = []string{filepath.Join(root, "out")}
			f := NewFence(p)
			target, err := f.Resolve(filepath.Join(root, "ws", tc.path))
			if err != nil {
				t.Fatal(err)
			}
			h, err := f.Lock("write", &target, Intent{})
			if tc.code != "" {
				if h != nil {
					h.Close()
				}
				if fserr.CodeOf(err) != tc.code {
					t.Fatalf("Lock = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lock: %v", err)
			}
			defer h.Close()
			if h.Exists() != tc.exists || h.Name != tc.path {
				t.Errorf("Lock held %q (exists %v), want %q (exists %v)", h.Name, h.Exists(), tc.path, tc.exists)
			}
			if tc.exists {
				// The lock is exclusive: another open file description
				// cannot take it.
				other, err := os.Open(filepath.Join(root, "ws", tc.path))
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
					t.Errorf("flock of the held file = %v, want EWOULDBLOCK", err)
				}
			}
		})
	}
}

// TestLook: a look holds what a write of the target would replace, for
// reading only and whatever the write fence says (the fence here is
// read-only, and one file lies outside the roots): a regular file is held
// open with its status, a missing file in a folder that exists (or, with
// mkdir, beneath an ancestor that is a folder) is held with no file; a
// folder, a FIFO, a file under deny_read and a missing folder without
// mkdir are refused with their codes. It makes nothing.
func TestLook(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "ws/f", "ws/d/", "ws/secret.key", "out/g")
	if err := unix.Mkfifo(filepath.Join(root, "ws/p"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := NewFence(policy.Policy{Mode: policy.ReadOnly, Cwd: filepath.Join(root, "ws"), DenyRead: []string{"**/*.key"}})
	for _, tc := range []struct {
		name   string
		path   string // relative to ws
		mkdir  bool
		code   fserr.Code
		exists bool
	}{
		{name: "file", path: "f", exists: true},
		{name: "file outside the roots", path: "../out/g", exists: true},
		{name: "missing file", path: "new"},
		{name: "missing folder with mkdir", path: "a/b/new", mkdir: true},
		{name: "missing folder", path: "a/b/new", code: fserr.NotFound},
		{name: "folder", path: "d", code: fserr.IsDir},
		{name: "fifo", path: "p", code: fserr.InvalidArgument},
		{name: "deny_read", path: "secret.key", code: fserr.SandboxDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := f.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := f.Look("write", target, tc.mkdir)
			if tc.code != "" {
				if fserr.CodeOf(err) != tc.code || h != nil {
					t.Fatalf("Look = %v, %v; want %s and nothing held", h, err, tc.code)
				}
			} else {
				if err != nil {
					t.Fatalf("Look: %v", err)
				}
				defer h.Close()
				if h.Exists() != tc.exists || h.Dir != nil || h.Given() != tc.path {
					t.Errorf("Look holds file %v, folder %v, given %q; want a file %v, no folder, given %q", h.File, h.Dir, h.Given(), tc.exists, tc.path)
				}
				if tc.exists && h.Stat.Size != 1 {
					t.Errorf("held size %d, want 1", h.Stat.Size)
				}
			}
			if _, err := os.Lstat(filepath.Join(root, "ws/a")); err == nil {
				t.Errorf("Look made ws/a")
			}
		})
	}
}
