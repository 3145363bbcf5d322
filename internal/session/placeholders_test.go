package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/internal/sandbox"
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
	r.Shell.Mounts = &sandbox.MountPlan{ReadOnly: []string{held}, Placeholders: []sandbox.Placeholder{{Path: held, Dir: true}}}
	if _, err := WriteWithPlaceholders(maker, r, sandbox.MakePlaceholders); err != nil {
		t.Fatal(err)
	}
	// The other session binds a file beneath the folder, planned while
	// it stood (made by neither session: the folder stays empty).
	other := privateDir(t)
	o := sampleRecord(ws)
	o.Shell.Mounts = &sandbox.MountPlan{ReadOnly: []string{filepath.Join(held, "alternates")}}
	if _, err := WriteWithPlaceholders(other, o, func(*sandbox.MountPlan) error { return nil }); err != nil {
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
