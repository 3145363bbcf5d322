package patch

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestPatchReplay replays real multi-file commits of spf13/cobra through
// the real dsh-fs patch, as a unified diff as git wrote it and in the
// apply_patch format: from the files as they were before the commit, the
// workspace must end byte-identical to the files after it, with nothing
// else left. scripts/patch-fixtures.sh laid the fixtures out from the
// repository's history (testdata/patch-replay/COMMIT: COMMIT, before/,
// after/, unified.diff, apply_patch.patch).
func TestPatchReplay(t *testing.T) {
	dirs, err := filepath.Glob("testdata/patch-replay/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures in testdata/patch-replay (%v): run scripts/patch-fixtures.sh", err)
	}
	bin := harness.Bin(t)
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		commit, _ := os.ReadFile(filepath.Join(dir, "COMMIT"))
		for _, format := range []string{"unified.diff", "apply_patch.patch"} {
			patch := filepath.Join(abs, format)
			if _, err := os.Stat(patch); err != nil {
				continue // the commit's diff has "\ No newline at end of file"
			}
			t.Run(filepath.Base(dir)+"/"+format, func(t *testing.T) {
				ws := t.TempDir()
				copyTree(t, filepath.Join(abs, "before"), ws)
				code, res, out, errs := harness.Run(t, harness.Cmd(bin, harness.Env(t, ws), ws, "patch", "--from", patch), nil)
				if code != 0 || !res.OK {
					t.Fatalf("commit %s: exit %d\nstdout: %s\nstderr: %s", strings.TrimSpace(string(commit)), code, out, errs)
				}
				want, got := treeContents(t, filepath.Join(abs, "after")), treeContents(t, ws)
				for name, w := range want {
					if g, ok := got[name]; !ok {
						t.Errorf("%s: missing after the patch", name)
					} else if !bytes.Equal(g, w) {
						t.Errorf("%s: %d bytes, want the commit's %d", name, len(g), len(w))
					}
				}
				for name := range got {
					if _, ok := want[name]; !ok {
						t.Errorf("%s: left after the patch; the commit has no such file", name)
					}
				}
			})
		}
	}
}

// treeContents maps every file beneath root (relative, slash-separated)
// to its content; folders are implied.
func treeContents(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// copyTree copies the files beneath src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for name, content := range treeContents(t, src) {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
