package layout

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// noteLayouts are workspaces whose plan the folders' notes must give
// exactly as a cold plan does. Each names a layout (makeTree's
// notation, "a => b" a symlink, "a == b" a hard link of b made after
// the tree), the policy's extra protected and deny_read globs.
var noteLayouts = []struct {
	name      string
	layout    []string
	protected []string
	denyRead  []string
	locked    string   // a folder made unreadable (0311), "" for none
	hidden    []string // files the plan must hide, so the table's rows are not vacuous
}{
	{name: "nested git", layout: append(append(gitRepo(".git"), gitRepo("sub/repo/.git")...),
		"sub/repo/.git/worktrees/w/HEAD", "sub/repo/code.go", "x/.git", "vendor/m/.git/HEAD")},
	{name: "env anywhere", layout: []string{"a/.env", "a/b/c/.env", "a/b/.env/inner", "d/e.txt", "notenv/.envrc"},
		denyRead: []string{"**/.env"}},
	{name: "protected globs", layout: []string{".vscode/settings.json", "build/out/bin", "src/x.go", "src/.bashrc", "keep/.github/workflows/ci.yml"},
		protected: []string{"build/**", "**/.github/workflows/**"}},
	{name: "hard links", layout: []string{"a/.env", "b/copy == a/.env", "b/other", "c/d/again == a/.env"},
		denyRead: []string{"**/.env"}, hidden: []string{"a/.env", "b/copy", "c/d/again"}},
	{name: "symlinks", layout: []string{"real/.env", "real/x", "link => real", "envlink => real/.env", "dangling => nowhere"},
		denyRead: []string{"**/.env", "**/x"}},
	{name: "unreadable folder", layout: append(gitRepo("locked/.git"), "open/a"), locked: "locked"},
}

// makeNoteTree makes layout beneath ws, hard links ("a == b") last.
func makeNoteTree(t *testing.T, ws string, layout []string) {
	t.Helper()
	var links [][2]string
	for _, e := range layout {
		if name, target, ok := cutLink(e); ok {
			links = append(links, [2]string{name, target})
			continue
		}
		makeTree(t, ws, e)
	}
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, l[0])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(ws, l[1]), filepath.Join(ws, l[0])); err != nil {
			t.Fatal(err)
		}
	}
}

func cutLink(e string) (name, target string, ok bool) {
	for i := 0; i+4 <= len(e); i++ {
		if e[i:i+4] == " == " {
			return e[:i], e[i+4:], true
		}
	}
	return "", "", false
}

func notePolicy(ws string, protected, denyRead []string) (policy.Policy, []sandbox.Root) {
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: append(append([]string(nil), policy.DefaultProtected...), protected...), DenyRead: denyRead}
	return p, []sandbox.Root{{Path: ws, Origin: "cwd"}}
}

// A warm plan applies the notes an earlier plan kept and matches no
// unchanged folder again, and its plan is exactly the cold one.
func TestPlanMountsNotesGiveTheColdPlan(t *testing.T) {
	tmp := canonTemp(t)
	for i, l := range noteLayouts {
		makeNoteTree(t, filepath.Join(tmp, "ws"+string(rune('a'+i))), l.layout)
	}
	time.Sleep(1100 * time.Millisecond) // no folder racy: the index is trusted
	for i, l := range noteLayouts {
		t.Run(l.name, func(t *testing.T) {
			ws := filepath.Join(tmp, "ws"+string(rune('a'+i)))
			if l.locked != "" {
				if os.Geteuid() == 0 {
					t.Skip("root reads every folder; e2e/exec's TestExecUnreadableFolderHidden runs this as an ordinary user")
				}
				must(t, os.Chmod(filepath.Join(ws, l.locked), 0o311))
				defer os.Chmod(filepath.Join(ws, l.locked), 0o755)
			}
			p, roots := notePolicy(ws, l.protected, l.denyRead)
			cold := planMounts(p, roots)
			store := indexStore(t)
			first := planMountsIndexed(p, roots, store)
			made := notesMade.Load()
			warm := planMountsIndexed(p, roots, store)
			if n := notesMade.Load() - made; n != 0 && l.locked == "" {
				t.Errorf("the warm plan matched %d folders again, want 0", n)
			}
			for _, h := range l.hidden {
				if !contains(cold.HiddenFiles, filepath.Join(ws, h)) {
					t.Errorf("%s is not hidden: %s", h, planJSON(cold))
				}
			}
			for _, m := range []struct {
				name string
				plan MountPlan
			}{{"first", first}, {"warm", warm}} {
				if !reflect.DeepEqual(m.plan, cold) {
					t.Errorf("%s plan:\n%s\nwant the cold one:\n%s", m.name, planJSON(m.plan), planJSON(cold))
				}
				if !reflect.DeepEqual(m.plan.DenyIdentities, cold.DenyIdentities) {
					t.Errorf("%s plan's deny identities %v, want %v", m.name, m.plan.DenyIdentities, cold.DenyIdentities)
				}
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A note holds what the plan found under the rules it was made under: a
// deny_read glob added since must hide what it covers in a folder that
// did not change. A cache keyed by the folder alone returned the first
// plan again (see the commit that added this test).
func TestPlanMountsNotesFollowThePolicy(t *testing.T) {
	ws := filepath.Join(canonTemp(t), "ws")
	makeTree(t, ws, "a/secret.txt", "a/code.go", "b/c/")
	time.Sleep(1100 * time.Millisecond)
	store := indexStore(t)
	p, roots := notePolicy(ws, nil, nil)
	planMountsIndexed(p, roots, store)
	planMountsIndexed(p, roots, store)
	// Added: a deny_read glob and a protected one.
	p2, _ := notePolicy(ws, []string{"b/c"}, []string{"**/secret.txt"})
	got := planMountsIndexed(p2, roots, store)
	if want := planMounts(p2, roots); !reflect.DeepEqual(got, want) {
		t.Errorf("after the policy changed:\n%s\nwant:\n%s", planJSON(got), planJSON(want))
	}
	if !reflect.DeepEqual(got.HiddenFiles, []string{ws + "/a/secret.txt"}) {
		t.Errorf("a/secret.txt is not hidden: %s", planJSON(got))
	}
	// And back: what the first rules did not cover is no longer covered.
	back := planMountsIndexed(p, roots, store)
	if want := planMounts(p, roots); !reflect.DeepEqual(back, want) {
		t.Errorf("back to the first policy:\n%s\nwant:\n%s", planJSON(back), planJSON(want))
	}
}

// A folder that changed is matched again; the others keep their notes.
// A new name for a deny_read file made in another folder moves no ctime
// of the file's own folder, yet it is hidden: links are never taken from
// a note.
func TestPlanMountsNotesOfChangedFolders(t *testing.T) {
	ws := filepath.Join(canonTemp(t), "ws")
	makeTree(t, ws, "a/code.go", "b/plain", "c/d/")
	time.Sleep(1100 * time.Millisecond)
	store := indexStore(t)
	p, roots := notePolicy(ws, nil, []string{"**/.env"})
	planMountsIndexed(p, roots, store)
	// b/plain becomes a name of the secret a/.env: a's ctime moves,
	// b's does not.
	must(t, os.Link(filepath.Join(ws, "b/plain"), filepath.Join(ws, "a/.env")))
	makeTree(t, ws, "c/d/.git", "c/d/.env")
	got := planMountsIndexed(p, roots, store)
	want := planMounts(p, roots)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after a change:\n%s\nwant:\n%s", planJSON(got), planJSON(want))
	}
	for _, f := range []string{ws + "/a/.env", ws + "/b/plain", ws + "/c/d/.env"} {
		if !contains(got.HiddenFiles, f) {
			t.Errorf("%s is not hidden: %s", f, planJSON(got))
		}
	}
	if !contains(got.ReadOnly, ws+"/c/d/.git") {
		t.Errorf("c/d/.git is not read-only: %s", planJSON(got))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A store file that is garbage is ignored, and so is a note that does not
// parse: the plan is the cold one, and the bad note is made again.
func TestPlanMountsNotesIgnoreGarbage(t *testing.T) {
	ws := filepath.Join(canonTemp(t), "ws")
	makeTree(t, ws, "a/.env", "a/b/", "c/x")
	time.Sleep(1100 * time.Millisecond)
	p, roots := notePolicy(ws, nil, []string{"**/.env"})
	want := planMounts(p, roots)
	dir := filepath.Join(t.TempDir(), "index")
	must(t, os.Mkdir(dir, 0o700))
	store, err := treeindex.OpenStore(dir)
	must(t, err)
	planMountsIndexed(p, roots, store)
	ix := store.Load(ws)
	f, _ := ix.Folder("a")
	for _, bad := range []string{"p\x05.en", "p\x04.env\x04\x09", "g\x04.env\x01", "x", "p\x00\x01"} {
		ix.SetNote(f, bad)
		must(t, store.Save(ix))
		if got := planMountsIndexed(p, roots, store); !reflect.DeepEqual(got, want) {
			t.Errorf("with note %q of a:\n%s\nwant:\n%s", bad, planJSON(got), planJSON(want))
		}
		if g, _ := store.Load(ws).Folder("a"); g.Note() == bad {
			t.Errorf("the bad note %q was kept", bad)
		}
	}
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		must(t, os.WriteFile(filepath.Join(dir, e.Name()), []byte("garbage"), 0o600))
	}
	if got := planMountsIndexed(p, roots, store); !reflect.DeepEqual(got, want) {
		t.Errorf("with a garbage store file:\n%s\nwant:\n%s", planJSON(got), planJSON(want))
	}
}
