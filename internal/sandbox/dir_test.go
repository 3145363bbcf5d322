//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// swapEntry puts entry (layout notation) in place of what its name holds
// now, which is moved aside to name.old first: "d => ../out" turns the
// folder d into a symlink, "ws => ws.old" the root into a symlink to its
// own old content, "d" a folder into a file. "a <=> b" exchanges a and b
// (exchange).
func swapEntry(t testing.TB, root, entry string) {
	t.Helper()
	if a, b, ok := strings.Cut(entry, " <=> "); ok {
		if err := exchange(filepath.Join(root, a), filepath.Join(root, b)); err != nil {
			t.Fatal(err)
		}
		return
	}
	name, _, _ := strings.Cut(entry, " => ")
	name = strings.TrimSuffix(name, "/")
	p := filepath.Join(root, name)
	if _, err := os.Lstat(p); err == nil {
		if err := os.Rename(p, p+".old"); err != nil {
			t.Fatal(err)
		}
	}
	makeLayout(t, root, entry)
}

// TestOpenDir opens the folder of a checked target through the confined
// handle. Each case runs in two windows: the swap lands between the check
// and OpenDir (caught by OpenDir's re-canonicalization), or after that,
// inside it (openConfined alone: caught by the confined resolution). Both
// must refuse alike and leave the outside untouched.
func TestOpenDir(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string // beside fenceLayout
		path   string   // relative to ws
		mkdir  bool
		swap   []string // after the check: swapEntry each

		dir    string // the folder opened, relative to the temp root
		reason string // or a denial's reason
		code   fserr.Code
		absent []string // must not exist afterwards
	}{
		{name: "a file in a folder", path: "d/g", dir: "ws/d"},
		{name: "a new file at the top", path: "new", dir: "ws"},
		{name: "a missing folder", path: "new/x", code: fserr.NotFound, absent: []string{"ws/new"}},
		{name: "missing folders, mkdir", path: "a/b/x", mkdir: true, dir: "ws/a/b"},
		{name: "folder swapped for a symlink out", path: "d/g", swap: []string{"ws/d => ../out"}, reason: policy.ReasonEscaped},
		{name: "folder swapped for an absolute symlink out", path: "d/g", swap: []string{"ws/d => $ROOT/out"}, reason: policy.ReasonEscaped},
		{name: "folder swapped for a symlink inside", layout: []string{"ws/e/"}, path: "d/g", swap: []string{"ws/d => e"}, reason: policy.ReasonEscaped},
		{name: "folder swapped for a file", path: "d/g", swap: []string{"ws/d"}, code: fserr.NotDir},
		{name: "deep folder swapped for a symlink out", layout: []string{"ws/d/e/f/"}, path: "d/e/f/x", swap: []string{"ws/d/e => ../../out"}, reason: policy.ReasonEscaped},
		{name: "root replaced by a symlink", path: "d/g", swap: []string{"ws => ws.old"}, reason: policy.ReasonEscaped},
		{name: "root replaced by a symlink out", path: "f", swap: []string{"ws => out"}, reason: policy.ReasonEscaped},
		{name: "mkdir under a folder swapped for a symlink", path: "d/new/x", mkdir: true, swap: []string{"ws/d => ../out"}, reason: policy.ReasonEscaped,
			absent: []string{"out/new"}},
		{name: "mkdir where a missing folder became a symlink", path: "new/deeper/x", mkdir: true, swap: []string{"ws/new => ../out"}, reason: policy.ReasonEscaped,
			absent: []string{"out/deeper"}},
		// A write aimed, through the exchange, at a git directory's
		// protected part is protected (its data, d/g, is writable
		// wherever the git directory is).
		{name: "folder exchanged with a repository", layout: repoLayout("ws/.git"), path: "d/config", swap: []string{"ws/d <=> ws/.git"}, reason: policy.ReasonProtected},
		{name: "deep folder exchanged with a repository", layout: append(repoLayout("ws/vendor/x.git"), "ws/d/e/"), path: "d/e/config",
			swap: []string{"ws/d/e <=> ws/vendor/x.git"}, reason: policy.ReasonProtected, absent: []string{"ws/vendor/x.git/config"}},
		{name: "root exchanged with a repository", layout: repoLayout("repo"), path: "config", swap: []string{"ws <=> repo"}, reason: policy.ReasonProtected},
		{name: "mkdir in a folder exchanged with a repository", layout: repoLayout("ws/.git"), path: "d/hooks/pre-commit", mkdir: true,
			swap: []string{"ws/d <=> ws/.git"}, reason: policy.ReasonProtected, absent: []string{"ws/.git/hooks", "ws/d/hooks"}},
		{name: "mkdir where the root became a symlink", path: "new/x", mkdir: true, swap: []string{"ws => out"}, reason: policy.ReasonEscaped,
			absent: []string{"out/new"}},
	} {
		for _, window := range []string{"before OpenDir", "inside OpenDir"} {
			t.Run(tc.name+"/"+window, func(t *testing.T) {
				root := tempRoot(t)
				makeLayout(t, root, fenceLayout...)
				makeLayout(t, root, tc.layout...)
				fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
				target, err := fence.Resolve(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				if err := fence.CheckWrite("write", &target); err != nil {
					t.Fatal(err)
				}
				for _, e := range tc.swap {
					swapEntry(t, root, expandRoot(e, root))
				}
				var d *Dir
				name := filepath.Base(target.rel)
				if window == "before OpenDir" {
					d, name, err = fence.openDir("write", target, tc.mkdir)
				} else {
					d, err = fence.openConfined("write", target, target.root, filepath.Dir(target.rel), tc.mkdir)
				}
				switch {
				case tc.dir != "":
					if err != nil {
						t.Fatalf("open: %v", err)
					}
					defer d.Close()
					if want := filepath.Join(root, tc.dir); d.Path != want || name != filepath.Base(tc.path) {
						t.Errorf("opened %s, name %q; want %s, %q", d.Path, name, want, filepath.Base(tc.path))
					}
					var st, want unix.Stat_t
					if err := unix.Fstat(d.fd, &st); err != nil || unix.Stat(filepath.Join(root, tc.dir), &want) != nil || st.Ino != want.Ino {
						t.Errorf("the handle is not the folder %s", tc.dir)
					}
				case tc.reason != "":
					if de := deniedAs(t, err); de.Reason != tc.reason {
						t.Errorf("reason %q, want %q (%v)", de.Reason, tc.reason, err)
					}
				default:
					if c := fserr.CodeOf(err); c != tc.code {
						t.Errorf("code %s, want %s (%v)", c, tc.code, err)
					}
				}
				if err != nil && d != nil {
					t.Errorf("a failed open returned a handle")
				}
				if b, err := os.ReadFile(filepath.Join(root, "out/x")); err != nil || string(b) != "x" || len(dirEntries(t, filepath.Join(root, "out"))) != 1 {
					t.Errorf("out/ changed: %v", dirEntries(t, filepath.Join(root, "out")))
				}
				for _, p := range tc.absent {
					if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
						t.Errorf("%s exists", p)
					}
				}
			})
		}
	}
}

// repoLayout is a git directory at dir, in the layout notation.
func repoLayout(dir string) []string {
	return []string{dir + "/HEAD", dir + "/objects/", dir + "/refs/", dir + "/config"}
}

// TestCheckOpened: the folder opened is judged by its real path, read back
// from the handle: moved under a protected name after the open it is a
// protected path, moved anywhere else an escape.
func TestCheckOpened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string
		move   string // the opened folder's new place, under the temp root
		reason string
	}{
		{name: "unmoved", path: "d/g"},
		// Into a git directory's data, a move is an escape; onto one of
		// its protected parts, a protected path.
		{name: "moved to .git", path: "d/g", move: "ws/.git", reason: policy.ReasonEscaped},
		{name: "moved to .git, onto its config", path: "d/config", move: "ws/.git", reason: policy.ReasonProtected},
		{name: "moved to .vscode", path: "d/g", move: "ws/.vscode", reason: policy.ReasonProtected},
		{name: "moved beside", path: "d/g", move: "ws/e", reason: policy.ReasonEscaped},
		{name: "moved out", path: "d/g", move: "out/d", reason: policy.ReasonEscaped},
		{name: "the root moved", path: "f", move: "ws2", reason: policy.ReasonEscaped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
			target, err := fence.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := fence.CheckWrite("write", &target); err != nil {
				t.Fatal(err)
			}
			d, name, err := fence.openDir("write", target, false)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if tc.move != "" {
				if err := os.Rename(d.Path, filepath.Join(root, tc.move)); err != nil {
					t.Fatal(err)
				}
			}
			err = fence.checkOpened("write", target, d, name)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if de := deniedAs(t, err); de.Reason != tc.reason {
				t.Errorf("reason %q, want %q (%v)", de.Reason, tc.reason, err)
			}
		})
	}
}

func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenDirRoot: the root itself, however spelled, is a folder.
func TestOpenDirRoot(t *testing.T) {
	for _, path := range []string{".", "d/..", "$ROOT/ws", "$ROOT/ws/"} {
		t.Run(path, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, "ws/ws")
			fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
			target, err := fence.Resolve(expandRoot(path, root))
			if err != nil {
				t.Fatal(err)
			}
			if err := fence.CheckWrite("write", &target); err != nil {
				t.Fatal(err)
			}
			d, name, err := fence.openDir("write", target, false)
			if fserr.CodeOf(err) != fserr.IsDir {
				if d != nil {
					d.Close()
				}
				t.Fatalf("OpenDir(%s) = %v, %q, %v; want FS_IS_DIR", path, d, name, err)
			}
		})
	}
}

// TestDirOpen: a name that is a symlink when used is refused as an
// escape, never followed; a plain file opens.
func TestDirOpen(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "ws/lnk => ../out/x", "ws/inside => f")
	d := openTestDir(t, root, "f")
	for name, want := range map[string]string{"f": "", "lnk": policy.ReasonEscaped, "inside": policy.ReasonEscaped} {
		file, err := d.Open(name, unix.O_RDONLY, 0)
		if want == "" {
			if err != nil {
				t.Errorf("Open(%s): %v", name, err)
			} else {
				file.Close()
			}
			continue
		}
		if err == nil {
			file.Close()
			t.Errorf("Open(%s) followed the symlink", name)
			continue
		}
		if de := deniedAs(t, err); de.Reason != want {
			t.Errorf("Open(%s): reason %q, want %q", name, de.Reason, want)
		}
	}
}

// openTestDir checks a write of ws/path and opens its folder.
func openTestDir(t *testing.T, root, path string) *Dir {
	t.Helper()
	fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
	target, err := fence.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fence.CheckWrite("write", &target); err != nil {
		t.Fatal(err)
	}
	d, _, err := fence.openDir("write", target, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestTempCommit links a temp file in: creating a name that exists by then
// is FS_EXISTS and leaves the existing file as it was; replacing replaces.
// Both kinds of temp file: unnamed (O_TMPFILE) and the named fallback for
// file systems without it. Nothing else is left in the folder.
func TestTempCommit(t *testing.T) {
	for _, named := range []bool{false, true} {
		for _, tc := range []struct {
			name     string
			layout   []string // under ws/d, beside g
			target   string
			replace  bool
			code     fserr.Code
			want     string // the target's content afterwards
			leftover bool   // a killed writer's staging file is there
		}{
			{name: "create", target: "new", want: "new"},
			{name: "create, but the name exists", target: "g", code: fserr.Exists, want: "x"},
			{name: "create, but a folder has the name", layout: []string{"ws/d/sub/"}, target: "sub", code: fserr.Exists},
			{name: "replace", target: "g", replace: true, want: "new"},
			{name: "replace, with a leftover staging file", target: "g", replace: true, want: "new", leftover: true},
			{name: "replace, but the name is gone", target: "gone", replace: true, want: "new"},
		} {
			kind := "unnamed"
			if named {
				kind = "named"
			}
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				root := tempRoot(t)
				makeLayout(t, root, fenceLayout...)
				makeLayout(t, root, tc.layout...)
				d := openTestDir(t, root, "d/g")
				if tc.leftover {
					writeFile(t, root, "ws/d/"+stagingName(tc.target), "leftover")
				}
				before := dirEntries(t, filepath.Join(root, "ws/d"))
				var tmp *Temp
				if named {
					tmp = namedTemp(t, d)
				} else {
					var err error
					if tmp, err = d.TempFile(tc.target, tc.replace, 0o644); err != nil {
						t.Fatal(err)
					}
					if tmp.name != "" {
						t.Skip("no O_TMPFILE here: the named case covers it")
					}
				}
				if _, err := tmp.WriteString("new"); err != nil {
					t.Fatal(err)
				}
				err := tmp.Commit(tc.target, tc.replace)
				tmp.Discard()
				if c := fserr.CodeOf(err); err != nil && c != tc.code || err == nil && tc.code != "" {
					t.Fatalf("Commit(%s, replace %v) = %v; want code %q", tc.target, tc.replace, err, tc.code)
				}
				if tc.want != "" {
					if b, err := os.ReadFile(filepath.Join(root, "ws/d", tc.target)); err != nil || string(b) != tc.want {
						t.Errorf("%s = %q, %v; want %q", tc.target, b, err, tc.want)
					}
				}
				after := dirEntries(t, filepath.Join(root, "ws/d"))
				want := before
				if tc.leftover {
					want = slices.DeleteFunc(slices.Clone(before), func(n string) bool { return n == stagingName(tc.target) })
				}
				if !slices.Contains(want, tc.target) {
					want = append(want, tc.target)
					slices.Sort(want)
				}
				if !slices.Equal(after, want) {
					t.Errorf("folder holds %v, want %v", after, want)
				}
			})
		}
	}
}

// namedTemp makes the named temp file TempFile falls back to where the
// file system has no O_TMPFILE.
func namedTemp(t *testing.T, d *Dir) *Temp {
	t.Helper()
	name := tempName()
	file, err := d.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return &Temp{File: file, dir: d, name: name}
}

// TestBareRepoLock: a write of a part of a git directory at the top of a
// root holds a lock on the root from its check to its Close, after the
// commit, so a second such write waits and then sees the first one's
// part: with refs/ there, HEAD written first makes objects/x complete a
// repository, which is denied, and objects is never made.
func TestBareRepoLock(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	makeLayout(t, root, "ws/refs/")
	open := func(path string, mkdir bool) (*Dir, string, error) {
		fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
		target, err := fence.Resolve(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := fence.CheckWrite("write", &target); err != nil {
			t.Fatal(err)
		}
		return fence.openDir("write", target, mkdir)
	}
	head, name, err := open("HEAD", false)
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		d, _, err := open("objects/x", true)
		if err == nil {
			d.Close()
		}
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("the second write did not wait for the first: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	tmp, err := head.TempFile(name, false, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	tmp.WriteString("ref: refs/heads/main\n")
	if err := tmp.Commit(name, false); err != nil {
		t.Fatal(err)
	}
	tmp.Discard()
	head.Close()
	select {
	case err := <-second:
		if de := deniedAs(t, err); de.Reason != policy.ReasonBareRepo {
			t.Errorf("reason %q, want %q", de.Reason, policy.ReasonBareRepo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second write still waits after the first closed")
	}
	if _, err := os.Lstat(filepath.Join(root, "ws/objects")); err == nil {
		t.Error("objects was made")
	}
}

// TestBareRepoLockOthersFree: writes of other names never take the lock.
func TestBareRepoLockOthersFree(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, fenceLayout...)
	openTestDir(t, root, "HEAD") // holds the lock until the test ends
	done := make(chan error, 1)
	go func() {
		fence := NewFence(testPolicy(root, policy.WorkspaceWrite))
		target, _ := fence.Resolve("d/new")
		if err := fence.CheckWrite("write", &target); err != nil {
			done <- err
			return
		}
		d, _, err := fence.openDir("write", target, false)
		if err == nil {
			d.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write of d/new waited for the lock of a write of HEAD")
	}
}

// TestOpenDirDangerPinned (issue 21): danger-full-access widens where a
// write may land, never how its path is opened. The approved write of an
// escalation opened its folder with a plain open(2), which follows
// symlinks, and checked nothing it opened: a folder of the path swapped
// for a symlink between the approval and the open sent the write where
// the approver never looked. In both windows (before OpenDir's own
// re-resolution, and inside it, after) the swap is FS_STALE and nothing
// lands outside. naiveDangerOpen, the old open, must be caught by the
// same cases: it shows that they can fail.
func TestOpenDirDangerPinned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string // relative to ws
		mkdir  bool
		swap   string // after the resolution
		absent []string
	}{
		{name: "folder swapped for a symlink out", path: "d/g", swap: "ws/d => ../out"},
		{name: "folder swapped for an absolute symlink out", path: "d/g", swap: "ws/d => $ROOT/out"},
		{name: "mkdir under a folder swapped for a symlink", path: "d/new/x", mkdir: true, swap: "ws/d => ../out", absent: []string{"out/new"}},
		{name: "root replaced by a symlink out", path: "f", swap: "ws => out"},
		{name: "mkdir where a missing folder became a symlink", path: "new/deeper/x", mkdir: true, swap: "ws/new => ../out", absent: []string{"out/deeper"}},
	} {
		for _, window := range []string{"before OpenDir", "inside OpenDir", "naive control"} {
			t.Run(tc.name+"/"+window, func(t *testing.T) {
				root := tempRoot(t)
				makeLayout(t, root, fenceLayout...)
				fence := NewFence(testPolicy(root, policy.DangerFullAccess))
				target, err := fence.Resolve(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				swapEntry(t, root, expandRoot(tc.swap, root))
				var d *Dir
				switch window {
				case "before OpenDir":
					d, _, err = fence.openDir("write", target, tc.mkdir)
				case "inside OpenDir":
					d, err = openPinned("write", target, filepath.Dir(target.Path), tc.mkdir)
				default:
					d, err = naiveDangerOpen(filepath.Dir(target.Path), tc.mkdir)
				}
				outside := func() bool {
					real, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", d.fd))
					return !Beneath(filepath.Join(root, "ws"), real)
				}
				if window == "naive control" {
					if err != nil || !outside() {
						t.Fatalf("the naive open was not led outside (%v): the case cannot fail", err)
					}
					d.Close()
					return
				}
				if err == nil {
					defer d.Close()
					t.Fatalf("opened %s (outside: %v), want FS_STALE", d.Path, outside())
				}
				if c := fserr.CodeOf(err); c != fserr.Stale {
					t.Errorf("code %s, want FS_STALE (%v)", c, err)
				}
				for _, p := range tc.absent {
					if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
						t.Errorf("%s exists", p)
					}
				}
			})
		}
	}
}

// naiveDangerOpen is the danger-full-access open before issue 21: make
// the folders and open the path, following every symlink on the way.
func naiveDangerOpen(parent string, mkdir bool) (*Dir, error) {
	if mkdir {
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, Path: parent}, nil
}

// TestFlockRetries: a lock wait interrupted by a signal is taken up
// again, but at most maxInterruptedTries times; any other answer is final.
func TestFlockRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		eintr int // how many calls are interrupted before one succeeds
		calls int
		err   error
	}{
		{name: "first try", calls: 1},
		{name: "EINTR twice", eintr: 2, calls: 3},
		{name: "EINTR beyond the bound", eintr: 1000, calls: maxInterruptedTries, err: errFlockRetries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := flockWith(func(int, int) error {
				calls++
				if calls <= tc.eintr {
					return unix.EINTR
				}
				return nil
			}, -1)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Errorf("flock = %v, want %v", err, tc.err)
			}
			if calls != tc.calls {
				t.Errorf("%d calls, want %d", calls, tc.calls)
			}
		})
	}
}
