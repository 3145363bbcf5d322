//go:build unix

package gitguard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// TestGuardFollowsSymlinks: git run through a symlinked folder of the
// root reaches what it points to. A copy of a repository in another
// writable root (tmp, which is not walked itself) with a planted
// core.fsmonitor, reached from the root by a symlink to one of its
// folders, is found by looking up from the target as git's discovery
// does, and neutralized. A symlink loop ends the walk, and a symlink to
// "/" walks nothing outside the writable roots.
func TestGuardFollowsSymlinks(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots = append(roots, sandbox.Root{Path: tmp, Origin: "tmp"})
	initRepo(t, ws)
	write(t, filepath.Join(ws, "docs/guide.md"), "x\n", 0o644)
	g := start(t, roots, pinned(ws, filepath.Join(ws, ".git")))
	copyDir := filepath.Join(tmp, "copy")
	gd := initRepo(t, copyDir)
	git(t, copyDir, "config", "core.fsmonitor", "evil")
	os.MkdirAll(filepath.Join(copyDir, "docs"), 0o755)
	os.RemoveAll(filepath.Join(ws, "docs"))
	for link, to := range map[string]string{"docs": filepath.Join(copyDir, "docs"), "loop": ws, "slash": "/"} {
		if err := os.Symlink(to, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	rep := g.Check()
	if a := action(t, rep, gd); !slices.Equal(a.Removed, []string{"config: core.fsmonitor"}) {
		t.Errorf("removed %q", a.Removed)
	}
	if len(rep.Neutralized) != 1 || len(rep.NotChecked) > 0 || len(rep.Failed) > 0 {
		t.Errorf("report %+v, want the one action", rep)
	}
}

// TestGuardNoBudget: past the old walk budget (20,000 entries) the walk
// goes on: a repository planted after 20,001 files is neutralized and
// nothing is named as not checked.
func TestGuardNoBudget(t *testing.T) {
	requireGit(t)
	ws, roots := root(t)
	manyFiles(t, filepath.Join(ws, "aaa"), 20001)
	g := start(t, roots, nil)
	gd := initRepo(t, filepath.Join(ws, "zzz"))
	git(t, filepath.Join(ws, "zzz"), "config", "core.fsmonitor", "evil")
	rep := g.Check()
	action(t, rep, gd)
	if len(rep.NotChecked) > 0 {
		t.Errorf("not checked: %q", rep.NotChecked)
	}
}

// manyFiles makes n empty files in dir, spread over folders of 1,000.
func manyFiles(t testing.TB, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkCheck50k is the end walk of a workspace of 50,000 files in
// 50 folders with one repository and nothing planted: what a session's
// end costs the supervisor. "live" lists every folder; "indexed" goes
// through the root's tree index as a session with a mount layer does,
// loaded from its file before each Check (so the entries it decodes are
// decoded afresh, as in a new process) and checked by the mount plan.
func BenchmarkCheck50k(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	manyFiles(b, filepath.Join(ws, "src"), 50000)
	for _, d := range []string{".git/objects", ".git/refs/heads", ".git/hooks"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git/config"), []byte("[core]\n\tbare = false\n"), 0o644)
	time.Sleep(1100 * time.Millisecond) // no folder racy
	roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
	dir := filepath.Join(b.TempDir(), "index")
	os.Mkdir(dir, 0o700)
	store, err := treeindex.OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	store.Sync(treeindex.Scan(ws, nil, IndexWatch()...))
	cpu := func() time.Duration {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, indexed := range []bool{false, true} {
		name := map[bool]string{false: "live", true: "indexed"}[indexed]
		b.Run(name, func(b *testing.B) {
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var plan *layout.MountPlan
				if indexed {
					plan = &layout.MountPlan{Indexes: []*treeindex.Index{treeindex.Scan(ws, store.Load(ws), IndexWatch()...)}}
				}
				g := Start(roots, plan, "")
				b.StartTimer()
				before := cpu()
				if rep := g.Check(); !rep.Empty() {
					b.Fatalf("report %+v", rep)
				}
				spent += cpu() - before
			}
			// The CPU time, user and system, of one Check: on a machine
			// shared with other work the wall time (ns/op) says more
			// about the others.
			b.ReportMetric(float64(spent)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
