package wire

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// A placeholder folder another session made, which this session's plan
// only needs to be there (it binds or pins what lies beneath it: a
// pin is every folder above a read-only path), is recorded by this
// session too, so that its maker's end does not remove it while this
// session runs: this session's child would find no folder to pin, and
// fail to start. Before, only a placeholder the plan binds itself was
// adopted.
func TestPlaceholderAboveWhatThePlanBindsIsKept(t *testing.T) {
	ws := privateDir(t)
	held := filepath.Join(ws, "objects", "info")
	if err := os.MkdirAll(filepath.Dir(held), 0o755); err != nil {
		t.Fatal(err)
	}
	maker := privateDir(t)
	r := sampleRecord(ws)
	r.Shell.Mounts = &layout.MountPlan{Files: plan.Files{ReadOnly: []string{held}}, Placeholders: []layout.Placeholder{{Path: held, Dir: true}}}
	if _, err := WriteWithPlaceholders(maker, r, layout.MakePlaceholders); err != nil {
		t.Fatal(err)
	}
	// The other session binds a file beneath the folder, planned while
	// it stood (made by neither session: the folder stays empty).
	other := privateDir(t)
	o := sampleRecord(ws)
	o.Shell.Mounts = &layout.MountPlan{Files: plan.Files{ReadOnly: []string{filepath.Join(held, "alternates")}}}
	if _, err := WriteWithPlaceholders(other, o, func(*layout.MountPlan) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := End(maker, r.Shell.Mounts.Placeholders); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(held); err != nil {
		t.Fatalf("the maker's end removed %s, which a running session pins: %v", held, err)
	}
	// Once no session needs it, the last one's end removes it.
	if err := End(other, o.Shell.Mounts.Placeholders); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(held); !os.IsNotExist(err) {
		t.Errorf("%s is still there after every session ended: %v", held, err)
	}
}

// A session that plans while another's placeholder folders stand
// (.git/objects, .git/info in a .git holding only HEAD) makes its own in
// them (.git/objects/info, .git/info/attributes). When both have ended,
// whichever ends first, none is left in the person's repository. Before,
// a session recorded only the placeholders its plan binds, not the
// folders above them: the maker's end found its folder not empty and
// left it, and the other session's end did not name it, so .git/info,
// .git/objects and .git/objects/info stayed for good (every concurrent
// run of TestExecShellKeepsNoCapability left them).
func TestNestedPlaceholdersGoWithTheLastSession(t *testing.T) {
	for _, makerEndsFirst := range []bool{true, false} {
		ws, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected}
		roots := []sandbox.Root{{Path: ws, Origin: "cwd"}}
		start := func() (string, *Record) {
			dir := privateDir(t)
			r := sampleRecord(ws)
			m := layout.PlanMounts(p, roots)
			r.Shell.Mounts = &m
			if _, err := WriteWithPlaceholders(dir, r, func(m *layout.MountPlan) error {
				layout.RefreshPlaceholders(m)
				return layout.MakePlaceholders(m)
			}); err != nil {
				t.Fatal(err)
			}
			return dir, r
		}
		maker, rm := start()
		other, ro := start()
		nested := filepath.Join(ws, ".git", "objects", "info")
		if !slices.ContainsFunc(ro.Shell.Mounts.Placeholders, func(h layout.Placeholder) bool { return h.Path == nested }) {
			t.Fatalf("the second session made no placeholder in the first one's .git/objects: %v", ro.Shell.Mounts.Placeholders)
		}
		ends := [][2]any{{maker, rm}, {other, ro}}
		if !makerEndsFirst {
			ends[0], ends[1] = ends[1], ends[0]
		}
		for _, e := range ends {
			if err := End(e[0].(string), e[1].(*Record).Shell.Mounts.Placeholders); err != nil {
				t.Fatal(err)
			}
		}
		var left []string
		filepath.WalkDir(ws, func(path string, _ fs.DirEntry, _ error) error {
			if rel, _ := filepath.Rel(ws, path); rel != "." && rel != ".git" && rel != filepath.Join(".git", "HEAD") {
				left = append(left, rel)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("maker ends first %t: left in the workspace after both sessions ended: %q", makerEndsFirst, left)
		}
	}
}
