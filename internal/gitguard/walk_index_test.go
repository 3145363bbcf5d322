//go:build unix

package gitguard

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// The end walk through the tree index reads again only the folders
// whose ctime moved; every other listing is the index's. Each case below
// hides a plant from some cheaper rule than that one, and pairs the
// guard's verdict with that rule's (the naive control): the rule misses
// the plant, so a guard that took it would too, and the test would fail.

// evilGit makes dir a git directory, without git, whose config runs
// code.
func evilGit(t *testing.T, dir string) {
	t.Helper()
	write(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(t, filepath.Join(dir, "config"), "[core]\n\tfsmonitor = evil\n", 0o644)
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// settle waits until every folder made so far is out of the index's
// racy window (a second), so the index vouches for it: what the end scan
// reuses is then really reused, not read again as racy.
func settle() { time.Sleep(1100 * time.Millisecond) }

// indexOf is the end walk's index of root ws, scanned again as Check does.
func indexOf(t *testing.T, g *Guard, ws string) *treeindex.Index {
	t.Helper()
	prev := g.indexes[ws]
	if prev == nil {
		t.Fatalf("no index of %s", ws)
	}
	return treeindex.Scan(ws, prev, IndexWatch()...)
}

// anyChangedFolder says whether found holds for a folder of the end
// walk's index of ws whose ctime moved during the session: the naive
// rule that looks only at what changed.
func anyChangedFolder(t *testing.T, g *Guard, ws string, found func(rel string, f *treeindex.Folder) bool) bool {
	t.Helper()
	hit := false
	eachFolder(indexOf(t, g, ws), func(rel string, f *treeindex.Folder) {
		hit = hit || g.after(time.Unix(f.CtimeSec, f.CtimeNsec)) && found(rel, f)
	})
	return hit
}

// eachFolder calls fn with each folder of ix reached from its root
// through the listings' folders (no symlink followed).
func eachFolder(ix *treeindex.Index, fn func(rel string, f *treeindex.Folder)) {
	var visit func(rel string)
	visit = func(rel string) {
		f, ok := ix.Folder(rel)
		if !ok {
			return
		}
		fn(rel, f)
		for _, d := range f.Dirs {
			visit(join(rel, d))
		}
	}
	visit(".")
}

// gitDirsIn are the git directories a walk over ix's listings finds (no
// symlink followed), unreadable folders read as empty: a naive walk.
func gitDirsIn(ix *treeindex.Index) []string {
	var out []string
	eachFolder(ix, func(rel string, f *treeindex.Folder) {
		names := map[string]bool{}
		for _, e := range f.Entries() {
			names[e.Name] = true
		}
		if names["HEAD"] && names["objects"] && names["refs"] {
			out = append(out, filepath.Join(ix.Root(), rel))
		}
	})
	return out
}

func ctimeAt(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return ctimeOf(&st)
}

func mtimeAt(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
}

// plantCase is one way to plant code so that a cheaper end check than
// the guard's would miss it.
type plantCase struct {
	name string
	// before lays out ws and tmp (another writable root, not indexed)
	// before the session; plant is what the session does and returns
	// the git directory git would run the planted code from.
	before func(t *testing.T, ws, tmp string)
	plant  func(t *testing.T, ws, tmp string) string
	// naiveFinds is the cheaper rule's verdict on the plant: whether it
	// would find the planted part of gitDir.
	naiveFinds func(t *testing.T, g *Guard, ws, gitDir string) bool
}

var plantCases = []plantCase{{
	// A folder's ctime says nothing of its subfolders': pruning the
	// subtrees of unchanged folders misses a plant two levels down.
	name: "deep in unchanged folders",
	before: func(t *testing.T, ws, tmp string) {
		write(t, filepath.Join(ws, "a/b/c/code.go"), "package c\n", 0o644)
	},
	plant: func(t *testing.T, ws, tmp string) string {
		evilGit(t, filepath.Join(ws, "a/b/c/.git"))
		return filepath.Join(ws, "a/b/c/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		// Prune: go into a folder only if it changed since the start.
		var found bool
		var visit func(dir string)
		visit = func(dir string) {
			if gitDir == dir {
				found = true
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				sub := filepath.Join(dir, e.Name())
				if e.IsDir() && g.after(ctimeAt(t, sub)) {
					visit(sub)
				}
			}
		}
		visit(ws)
		return found
	},
}, {
	// touch -d sets a folder's mtime back, never its ctime: an index
	// trusted by mtime keeps the old listing.
	name: "folder's mtime set back",
	before: func(t *testing.T, ws, tmp string) {
		write(t, filepath.Join(ws, "a/code.go"), "package a\n", 0o644)
	},
	plant: func(t *testing.T, ws, tmp string) string {
		old := mtimeAt(t, filepath.Join(ws, "a"))
		evilGit(t, filepath.Join(ws, "a/.git"))
		if err := os.Chtimes(filepath.Join(ws, "a"), old, old); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(ws, "a/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		// An index by mtime: a folder whose mtime is the one it had at
		// the start (before it the session had no say) keeps its listing.
		if !mtimeAt(t, filepath.Join(ws, "a")).Before(g.since) {
			t.Fatal("the folder's mtime was not set back")
		}
		return slices.Contains(gitDirsIn(g.indexes[ws]), gitDir)
	},
}, {
	// A symlink made before the session, in a folder that does not
	// change, to a folder outside the indexed roots where the session
	// plants: checking only the folders that changed never follows it.
	name: "behind a symlink in an unchanged folder",
	before: func(t *testing.T, ws, tmp string) {
		if err := os.MkdirAll(filepath.Join(tmp, "elsewhere/sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(tmp, "elsewhere/sub"), filepath.Join(ws, "link")); err != nil {
			t.Fatal(err)
		}
	},
	plant: func(t *testing.T, ws, tmp string) string {
		evilGit(t, filepath.Join(tmp, "elsewhere/.git"))
		return filepath.Join(tmp, "elsewhere/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		// Only the folders whose ctime moved, their symlinks followed.
		return anyChangedFolder(t, g, ws, func(rel string, f *treeindex.Folder) bool {
			return slices.ContainsFunc(f.Entries(), func(e treeindex.Entry) bool {
				target, err := filepath.EvalSymlinks(filepath.Join(ws, rel, e.Name))
				return err == nil && e.Kind == treeindex.KindSymlink && sandbox.Beneath(filepath.Dir(gitDir), target)
			})
		})
	},
}, {
	// A .git file made before the session, in a folder that does not
	// change, pointing at a git directory outside the indexed roots
	// that the session makes: checking only the folders that changed
	// never reads the pointer.
	name: "behind a .git file in an unchanged folder",
	before: func(t *testing.T, ws, tmp string) {
		write(t, filepath.Join(ws, "sub/.git"), "gitdir: "+filepath.Join(tmp, "gd")+"\n", 0o644)
		write(t, filepath.Join(ws, "sub/code.go"), "package sub\n", 0o644)
	},
	plant: func(t *testing.T, ws, tmp string) string {
		evilGit(t, filepath.Join(tmp, "gd"))
		return filepath.Join(tmp, "gd")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		// Only the folders whose ctime moved, their .git files read.
		return anyChangedFolder(t, g, ws, func(rel string, f *treeindex.Folder) bool {
			target, ok := pointerTarget(filepath.Join(ws, rel, ".git"))
			return ok && target == gitDir
		})
	},
}, {
	// A repository with a planted config made before the session in
	// another writable root (its files' ctimes all before the start) and
	// renamed into place: judged by its files' ctimes alone it was not
	// planted. The rename moves the ctime of the folder it lands in (and,
	// on Linux's local file systems, of the moved folder: logged).
	name: "renamed into place",
	before: func(t *testing.T, ws, tmp string) {
		evilGit(t, filepath.Join(tmp, "staged/.git"))
		write(t, filepath.Join(ws, "a/b/code.go"), "package b\n", 0o644)
	},
	plant: func(t *testing.T, ws, tmp string) string {
		before := ctimeAt(t, filepath.Join(tmp, "staged"))
		if err := os.Rename(filepath.Join(tmp, "staged"), filepath.Join(ws, "a/b/moved")); err != nil {
			t.Fatal(err)
		}
		t.Logf("rename moved the moved folder's ctime: %v", ctimeAt(t, filepath.Join(ws, "a/b/moved")).After(before))
		return filepath.Join(ws, "a/b/moved/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		return g.after(ctimeAt(t, filepath.Join(gitDir, "config")))
	},
}, {
	// Two folders swapped in one call (renameat2 RENAME_EXCHANGE): the
	// path holds another folder, whose inode the index did not keep there.
	name: "exchanged with a folder outside",
	before: func(t *testing.T, ws, tmp string) {
		write(t, filepath.Join(ws, "x/sub/code.go"), "package sub\n", 0o644)
		evilGit(t, filepath.Join(tmp, "evil/sub/.git"))
	},
	plant: func(t *testing.T, ws, tmp string) string {
		if err := exchange(filepath.Join(ws, "x/sub"), filepath.Join(tmp, "evil/sub")); err != nil {
			t.Skipf("exchange: %v", err)
		}
		return filepath.Join(ws, "x/sub/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		return g.after(ctimeAt(t, filepath.Join(gitDir, "config")))
	},
}, {
	// A config with planted code made before the session, hard-linked
	// into a repository that does not change otherwise: its content
	// and mtime are old, the link moves its ctime.
	name: "hard-linked config",
	before: func(t *testing.T, ws, tmp string) {
		evilGit(t, filepath.Join(ws, "repo/.git"))
		write(t, filepath.Join(ws, "repo/.git/config"), "[core]\n\tbare = false\n", 0o644)
		write(t, filepath.Join(tmp, "evil.config"), "[core]\n\tfsmonitor = evil\n", 0o644)
	},
	plant: func(t *testing.T, ws, tmp string) string {
		config := filepath.Join(ws, "repo/.git/config")
		if err := os.Remove(config); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(tmp, "evil.config"), config); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(ws, "repo/.git")
	},
	naiveFinds: func(t *testing.T, g *Guard, ws, gitDir string) bool {
		return !mtimeAt(t, filepath.Join(gitDir, "config")).Before(g.since)
	},
}}

// TestGuardIndexedFindsPlants: each way of hiding a plant from a cheaper
// end check is found through the index, which reuses the listings of
// the folders that did not change (so the test is of the index's
// reuse, not of a full read).
func TestGuardIndexedFindsPlants(t *testing.T) {
	for _, tc := range plantCases {
		t.Run(tc.name, func(t *testing.T) {
			ws, roots := root(t)
			tmp, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			roots = append(roots, sandbox.Root{Path: tmp, Origin: "tmp"})
			write(t, filepath.Join(ws, "other/keep.go"), "package other\n", 0o644)
			tc.before(t, ws, tmp)
			settle()
			g := start(t, roots, nil)
			gitDir := tc.plant(t, ws, tmp)
			if tc.naiveFinds(t, g, ws, gitDir) {
				t.Errorf("the naive control finds the plant: the case tests nothing")
			}
			rep := g.Check()
			a := action(t, rep, gitDir)
			if !slices.Contains(a.Removed, "config: core.fsmonitor") {
				t.Errorf("removed %q, want the fsmonitor", a.Removed)
			}
			if g.scanned.Reused == 0 {
				t.Errorf("the end scan reused no folder (%+v): the index was not used", g.scanned)
			}
		})
	}
}

// TestGuardIndexedRacy: a folder the plan read in the same tick of the
// kernel's coarse clock as a change keeps its ctime across the change;
// the index reads such a folder again (its racy flag), where one that
// trusted an equal ctime would keep the listing without the plant.
func TestGuardIndexedRacy(t *testing.T) {
	for try := 0; try < 50; try++ {
		ws, roots := root(t)
		a := filepath.Join(ws, "a")
		if err := os.Mkdir(a, 0o755); err != nil {
			t.Fatal(err)
		}
		plan := withIndexes(t, roots, nil)
		g := Start(roots, plan, "")
		kept, _ := plan.Indexes[0].Folder("a")
		evilGit(t, filepath.Join(a, ".git"))
		if !ctimeAt(t, a).Equal(time.Unix(kept.CtimeSec, kept.CtimeNsec)) {
			continue // the clock ticked between: try again
		}
		if !kept.Racy {
			t.Fatal("a folder read in the tick it changed is not racy")
		}
		// The naive control: the same index with its racy flags cleared.
		var racy []*treeindex.Folder
		eachFolder(plan.Indexes[0], func(_ string, f *treeindex.Folder) {
			if f.Racy {
				racy = append(racy, f)
				f.Racy = false
			}
		})
		naive := treeindex.Scan(ws, plan.Indexes[0])
		for _, f := range racy {
			f.Racy = true
		}
		if slices.Contains(gitDirsIn(naive), filepath.Join(a, ".git")) {
			t.Fatal("an index trusting equal ctimes finds the plant: the case tests nothing")
		}
		action(t, g.Check(), filepath.Join(a, ".git"))
		return
	}
	// Since Linux 6.13, ext4, xfs, btrfs and tmpfs stamp a fine-grained
	// ctime on the change after one was read (multigrain timestamps), so
	// the case cannot arise there; treeindex's TestScanRacyFolderReadAgain
	// pins the rule with a planted stale listing.
	t.Skip("could not plant within one tick of the kernel's coarse clock in 50 tries (multigrain timestamps?)")
}

// TestGuardIndexedUnreadable: a folder the supervisor could not read
// when the index was scanned is in the index as unreadable, never as
// empty: the end walk reads it live (as an ordinary user, with its
// owner's rights restored; here, root reads it). A walk that read the
// unreadable folder as empty misses what is in it. The scan runs on a
// thread whose file-system uid is nobody's (setfsuid is per thread), so
// root can stand in for an ordinary supervisor.
func TestGuardIndexedUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to scan as nobody (setfsuid)")
	}
	ws, roots := root(t)
	for d := ws; d != "/"; d = filepath.Dir(d) {
		if d == os.TempDir() {
			break
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, "open/code.go"), "package open\n", 0o644)
	locked := filepath.Join(ws, "locked")
	write(t, filepath.Join(locked, "code.go"), "package locked\n", 0o644)
	settle()
	plan := withIndexes(t, roots, nil)
	g := startLive(t, roots, plan)
	evilGit(t, filepath.Join(locked, "sub/.git"))
	// (Root reads the folder through its mode; the guard's own end scan
	// would too. The walk is given the scan as nobody.)
	if err := os.Chmod(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	// The end scan as nobody: the locked folder is unreadable.
	if !haveSetfsuid {
		t.Skip("no setfsuid here (macOS): the scan as nobody needs it")
	}
	var end *treeindex.Index
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		setFsuid(65534)
		end = treeindex.Scan(ws, plan.Indexes[0])
	}()
	<-done
	if f, ok := end.Folder("locked"); !ok || !f.Unreadable {
		t.Fatalf("scanned as nobody, the locked folder is not unreadable: %+v", f)
	}
	if slices.Contains(gitDirsIn(end), filepath.Join(locked, "sub/.git")) {
		t.Fatal("a walk reading the unreadable folder as empty finds the plant: the case tests nothing")
	}
	// The walk over that end index: the unreadable folder is walked live.
	rep := Report{}
	w := newWalk(g, &rep)
	w.indexes = []*treeindex.Index{end}
	w.run()
	w.finish()
	if _, ok := w.gitDirs[filepath.Join(locked, "sub/.git")]; !ok {
		t.Errorf("the walk did not find the repository in the unreadable folder: %v", sortedKeys(w.gitDirs))
	}
	if len(rep.NotChecked) > 0 {
		t.Errorf("not checked: %q", rep.NotChecked)
	}
}

// TestGuardIndexReadsOnlyChanged: the end scan reads again only the
// folder that changed during the session; the others' listings are the
// index's.
func TestGuardIndexReadsOnlyChanged(t *testing.T) {
	ws, roots := root(t)
	write(t, filepath.Join(ws, "a/code.go"), "package a\n", 0o644)
	write(t, filepath.Join(ws, "b/code.go"), "package b\n", 0o644)
	settle()
	g := start(t, roots, nil)
	write(t, filepath.Join(ws, "a/new.go"), "package a\n", 0o644)
	if rep := g.Check(); !rep.Empty() {
		t.Errorf("Check() = %+v", rep)
	}
	if g.scanned.Read != 1 || g.scanned.Reused != 2 {
		t.Errorf("the end scan: %+v, want a read again, the root and b reused", g.scanned)
	}
}
