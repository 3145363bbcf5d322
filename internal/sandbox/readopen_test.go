//go:build unix

package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestWalkPath opens each path of the Canonical layout one handle at a
// time, and checks the path walked against Canonical (the reference
// resolution) and the object opened against what the kernel resolves.
func TestWalkPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string // added to canonLayout
		path   string   // "$ROOT" is the temp root; relative paths are taken from $ROOT/ws
		flags  int      // default O_RDONLY
		follow bool
		want   string // the path walked, relative to $ROOT, or absolute when it starts with "/"
		link   bool   // the object is the symlink itself
		errno  unix.Errno
	}{
		{name: "plain file", path: "f", follow: true, want: "ws/f"},
		{name: "folder", path: "d", follow: true, want: "ws/d"},
		{name: "folder as a folder", path: "d", flags: unix.O_RDONLY | unix.O_DIRECTORY, follow: true, want: "ws/d"},
		{name: "file as a folder", path: "f", flags: unix.O_RDONLY | unix.O_DIRECTORY, follow: true, errno: unix.ENOTDIR},
		{name: "file on the way", path: "f/x", follow: true, errno: unix.ENOTDIR},
		{name: "missing", path: "nope", follow: true, errno: unix.ENOENT},
		{name: "missing folder on the way", path: "nope/x", follow: true, errno: unix.ENOENT},
		{name: "dotdot out", path: "../out/x", follow: true, want: "out/x"},
		{name: "dotdot above slash", path: "/../../..", follow: true, want: "/"},
		{name: "trailing dotdot", path: "d/..", follow: true, want: "ws"},
		{name: "link to a file", layout: []string{"ws/l => d/g"}, path: "l", follow: true, want: "ws/d/g"},
		{name: "link to a folder, as a folder", layout: []string{"ws/l => ../out/sub"}, path: "l", flags: unix.O_RDONLY | unix.O_DIRECTORY, follow: true, want: "out/sub"},
		{name: "link to a file, as a folder", layout: []string{"ws/l => d/g"}, path: "l", flags: unix.O_RDONLY | unix.O_DIRECTORY, follow: true, errno: unix.ENOTDIR},
		{name: "link/.. is the parent of the target", layout: []string{"ws/link => ../out/sub"}, path: "link/..", follow: true, want: "out"},
		{name: "link/../x", layout: []string{"ws/link => ../out/sub"}, path: "link/../x", follow: true, want: "out/x"},
		{name: "absolute link", layout: []string{"ws/abs => $ROOT/out/sub"}, path: "abs/y", follow: true, want: "out/sub/y"},
		{name: "chain across folders", layout: []string{"ws/a => d/b", "ws/d/b => ../../out/c", "out/c => sub"}, path: "a/y", follow: true, want: "out/sub/y"},
		{name: "link to slash", layout: []string{"ws/root => /"}, path: "root/..", follow: true, want: "/"},
		{name: "loop", layout: []string{"ws/a => b", "ws/b => a"}, path: "a", follow: true, errno: unix.ELOOP},
		{name: "dangling link", layout: []string{"ws/dl => nope"}, path: "dl", follow: true, errno: unix.ENOENT},
		// Without follow, under O_PATH, the last link is the object.
		{name: "O_PATH link itself", layout: []string{"ws/l => ../out/x"}, path: "l", flags: oPath, want: "ws/l", link: true},
		{name: "O_PATH dangling link itself", layout: []string{"ws/dl => nope"}, path: "dl", flags: oPath, want: "ws/dl", link: true},
		{name: "O_PATH link on the way followed", layout: []string{"ws/l => ../out"}, path: "l/x", flags: oPath, want: "out/x"},
		{name: "O_PATH followed link", layout: []string{"ws/l => ../out/x"}, path: "l", flags: oPath, follow: true, want: "out/x"},
		// A /proc magic link is read as text, never followed by the
		// kernel: /proc/self/root names "/".
		{name: "magic link read as text", path: "/proc/self/root/proc/self/root", flags: oPath, follow: true, want: "/"},
	} {
		eachWalk(t, tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, canonLayout...)
			makeLayout(t, root, tc.layout...)
			path := expandRoot(tc.path, root)
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, "ws") + "/" + path
			}
			flags := tc.flags
			if flags == 0 {
				flags = unix.O_RDONLY
			}
			w, err := walkPath(path, walkSpec{flags: flags, followLast: tc.follow})
			if tc.errno != 0 {
				if !errors.Is(err, tc.errno) {
					t.Fatalf("walkPath(%q) = %q, %v; want %v", path, w.path, err, tc.errno)
				}
				return
			}
			if err != nil {
				t.Fatalf("walkPath(%q): %v", path, err)
			}
			defer unix.Close(w.fd)
			want := tc.want
			if !strings.HasPrefix(want, "/") {
				want = filepath.Join(root, want)
			}
			if w.path != want {
				t.Errorf("walked %q, want %q", w.path, want)
			}
			if isLink := w.st.Mode&unix.S_IFMT == unix.S_IFLNK; isLink != tc.link {
				t.Errorf("opened a symlink: %v, want %v", isLink, tc.link)
			}
			// The reference: Canonical agrees where it resolves the last
			// link, and the kernel opens the same object.
			if tc.follow {
				if c, err := Canonical(filepath.Join(root, "ws"), path); err != nil || c != w.path {
					t.Errorf("Canonical(%q) = %q, %v; walked %q", path, c, err, w.path)
				}
			}
			stat := os.Stat
			if !tc.follow {
				stat = os.Lstat
			}
			fi, err := stat(path)
			if err != nil {
				t.Fatal(err)
			}
			kst := fi.Sys().(*syscall.Stat_t)
			if uint64(kst.Dev) != uint64(w.st.Dev) || kst.Ino != w.st.Ino {
				t.Errorf("opened %d:%d, the kernel resolves %d:%d", w.st.Dev, w.st.Ino, kst.Dev, kst.Ino)
			}
		})
	}
}

// TestOpenWalkPipeMagicLink: /proc/self/fd/N of a pipe reads as
// "pipe:[…]", which names nothing: the pipe is never opened.
func TestOpenWalkPipeMagicLink(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	if _, err := os.Readlink(p); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if got, err := walkPath(p, walkSpec{flags: unix.O_RDONLY | unix.O_NONBLOCK, followLast: true}); !errors.Is(err, unix.ENOENT) {
		unix.Close(got.fd)
		t.Fatalf("walkPath(%s) = %q, %v; want ENOENT", p, got.path, err)
	}
}

// deepTree makes a chain of folders of depth levels, each name of width
// bytes, below root, by handle (mkdirat on the folder made before), so
// it goes past PATH_MAX. It returns the deepest folder's path.
func deepTree(t testing.TB, root string, depth, width int) string {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := root
	for i := range depth {
		name := strings.Repeat(string(rune('a'+i%26)), width)
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd, path = next, path+"/"+name
	}
	f, err := unix.Openat(fd, "leaf.txt", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(f, []byte("deep\n"))
	unix.Close(f)
	unix.Close(fd)
	return path
}

// TestOpenWalkBeyondPathMax opens a file whose path is longer than
// PATH_MAX: the walk takes one name at a time.
func TestOpenWalkBeyondPathMax(t *testing.T) {
	root := tempRoot(t)
	deep := deepTree(t, root, 300, 20)
	leaf := deep + "/leaf.txt"
	if len(leaf) <= unix.PathMax {
		t.Fatalf("the tree is not deep enough: %d bytes", len(leaf))
	}
	if _, err := os.Stat(leaf); !errors.Is(err, unix.ENAMETOOLONG) {
		t.Fatalf("os.Stat of %d bytes: %v, want ENAMETOOLONG", len(leaf), err)
	}
	w, err := walkPath(leaf, walkSpec{flags: unix.O_RDONLY, followLast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(w.fd)
	if w.path != leaf {
		t.Errorf("walked a path of %d bytes, want %d", len(w.path), len(leaf))
	}
	buf := make([]byte, 16)
	if n, _ := unix.Read(w.fd, buf); string(buf[:n]) != "deep\n" {
		t.Errorf("read %q", buf[:n])
	}
}

// readFence is a fence whose deny_read list is denyRead ("$ROOT"
// expanded), with the home folder at $ROOT/home.
func readFence(t *testing.T, root string, denyRead ...string) *Fence {
	t.Helper()
	makeLayout(t, root, "home/")
	p := testPolicy(root, policy.WorkspaceWrite)
	p.Home = filepath.Join(root, "home")
	for _, g := range denyRead {
		p.DenyRead = append(p.DenyRead, expandRoot(g, root))
	}
	return NewFence(p)
}

// TestOpenReadDecidesOnWhatItOpened swaps a checked path for a symlink
// to a secret between Resolve and OpenRead, as a racing process would:
// what OpenRead opened is the secret, and it is denied.
func TestOpenReadDecidesOnWhatItOpened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string
		path   string
		swap   [2]string // rename swap[0] away and put a symlink to swap[1] in its place
		denied bool
		// statDenied: stat, which does not follow a last symlink, sees
		// the secret too (a folder on the way was swapped); otherwise it
		// describes the link, which is no secret.
		statDenied bool
	}{
		{name: "file swapped for a link to a secret", layout: []string{"ws/a.txt"}, path: "a.txt", swap: [2]string{"ws/a.txt", "$ROOT/out/secret/key"}, denied: true},
		{name: "folder swapped for a link to a secret folder", layout: []string{"ws/d/key"}, path: "d/key", swap: [2]string{"ws/d", "../out/secret"}, denied: true, statDenied: true},
		{name: "file swapped for a link elsewhere", layout: []string{"ws/a.txt", "ws/b.txt"}, path: "a.txt", swap: [2]string{"ws/a.txt", "b.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, "out/secret/key")
			makeLayout(t, root, tc.layout...)
			f := readFence(t, root, "$ROOT/out/secret/**")
			target, err := f.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.CheckRead("read", target); err != nil {
				t.Fatalf("CheckRead before the swap: %v", err)
			}
			from := filepath.Join(root, tc.swap[0])
			if err := os.Rename(from, from+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(expandRoot(tc.swap[1], root), from); err != nil {
				t.Fatal(err)
			}
			file, err := f.OpenRead("read", target)
			if !tc.denied {
				if err != nil {
					t.Fatalf("OpenRead: %v", err)
				}
				file.Close()
				return
			}
			if err == nil {
				b, _ := io.ReadAll(file)
				file.Close()
				t.Fatalf("OpenRead opened %q and read %q: want deny_read", file.Name(), b)
			}
			if de := deniedAs(t, err); de.Reason != policy.ReasonDenyRead || de.Path != tc.path {
				t.Errorf("denial %+v", de)
			}
			st, err := f.Lstat("stat", target)
			switch {
			case tc.statDenied && fserr.CodeOf(err) != fserr.SandboxDenied:
				t.Errorf("Lstat: %v, want a denial", err)
			case !tc.statDenied && (err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK):
				t.Errorf("Lstat: mode %o, %v; want the link", st.Mode, err)
			}
		})
	}
}

// TestOpenReadHardLink: a hard link to a file an anchored glob covers is
// denied by its identity, whatever its own name; a file with several
// links that is no secret is not.
func TestOpenReadHardLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		denyRead string
		secret   string // linked as ws/link
		denied   bool
	}{
		{name: "home glob", denyRead: "~/.ssh/**", secret: "home/.ssh/id", denied: true},
		{name: "home folder entry", denyRead: "~/.ssh", secret: "home/.ssh/id", denied: true},
		{name: "absolute glob", denyRead: "$ROOT/etc/secrets/*.key", secret: "etc/secrets/db.key", denied: true},
		{name: "absolute glob, another name in the folder", denyRead: "$ROOT/etc/secrets/*.key", secret: "etc/secrets/db.txt"},
		{name: "absolute file", denyRead: "$ROOT/etc/shadow", secret: "etc/shadow", denied: true},
		{name: "glob with a wildcard folder", denyRead: "$ROOT/srv/*/token", secret: "srv/app/token", denied: true},
		{name: "unanchored glob: the link's name does not match", denyRead: "**/.env", secret: "ws/app/.env"},
		{name: "not a secret", denyRead: "~/.ssh/**", secret: "ws/plain.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, tc.secret)
			f := readFence(t, root, tc.denyRead)
			if err := os.Link(filepath.Join(root, tc.secret), filepath.Join(root, "ws/link")); err != nil {
				t.Fatal(err)
			}
			target, err := f.Resolve("link")
			if err != nil {
				t.Fatal(err)
			}
			file, err := f.OpenRead("read", target)
			if !tc.denied {
				if err != nil {
					t.Fatalf("OpenRead: %v", err)
				}
				file.Close()
				return
			}
			if de := deniedAs(t, err); de.Reason != policy.ReasonDenyRead {
				t.Errorf("denial %+v", de)
			}
			if _, err := f.Lstat("stat", target); fserr.CodeOf(err) != fserr.SandboxDenied {
				t.Errorf("Lstat: %v, want a denial", err)
			}
			// A file opened by other means (a write's locked target).
			plain, err := os.Open(filepath.Join(root, "ws/link"))
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if err := f.CheckReadOpened("write", target, plain); fserr.CodeOf(err) != fserr.SandboxDenied {
				t.Errorf("CheckReadOpened: %v, want a denial", err)
			}
		})
	}
}

// TestLstatMissing: a path that does not exist is fs.ErrNotExist, once
// it passed deny_read by name; under a denied folder it is a denial.
func TestLstatMissing(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	f := readFence(t, root, "secret")
	for path, denied := range map[string]bool{"nope": false, "d/nope/x": false, "secret/nope": true} {
		target, err := f.Resolve(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Lstat("stat", target)
		if denied {
			deniedAs(t, err)
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lstat(%q): %v, want not-exist", path, err)
		}
	}
}
