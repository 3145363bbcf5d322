//go:build unix

package race

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// freeBytes is what an unprivileged file may still take on the file
// system of path.
func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// TestWriteNoSpace fills a 1 MiB tmpfs: a write or an edit that does not
// fit fails with FS_NO_SPACE, the old content stays exactly as it was, and
// no temp file is left in the folder.
func TestWriteNoSpace(t *testing.T) {
	mnt := smallTmpfs(t, "1m")
	bin := harness.Bin(t)
	ws := filepath.Join(mnt, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	env := harness.Env(t, ws)
	target := filepath.Join(ws, "f.txt")
	old := append([]byte("MARK: the one line an edit grows\n"), bytes.Repeat([]byte("OLD old content, kept whole\n"), (100<<10)/28)...)

	t.Run("write", func(t *testing.T) {
		if err := os.WriteFile(target, old, 0o644); err != nil {
			t.Fatal(err)
		}
		input := bytes.Repeat([]byte("NEW content that cannot fit\n"), (4<<20)/28)
		code, res, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "write", "f.txt", "--overwrite", "--from", "-"), bytes.NewReader(input))
		if code != 1 || res.OK || res.Error.Code != "FS_NO_SPACE" {
			t.Errorf("write of 4 MiB into 1 MiB: exit %d, want 1 with FS_NO_SPACE\nstdout: %s\nstderr: %s", code, out, errs)
		}
		assertUnchanged(t, ws, target, old)
	})

	// The source on the same file system: the kernel copies it
	// (copy_file_range), and its ENOSPC is the same failure.
	t.Run("write --from", func(t *testing.T) {
		if err := os.WriteFile(target, old, 0o644); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(mnt, "src.txt")
		if err := os.WriteFile(src, bytes.Repeat([]byte("NEW content that cannot fit\n"), (300<<10)/28), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(src)
		fillTmpfs(t, mnt, 64<<10)
		code, res, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "write", "f.txt", "--overwrite", "--from", src), nil)
		if code != 1 || res.OK || res.Error.Code != "FS_NO_SPACE" {
			t.Errorf("write --from of 300 KiB into 64 KiB: exit %d, want 1 with FS_NO_SPACE\nstdout: %s\nstderr: %s", code, out, errs)
		}
		assertUnchanged(t, ws, target, old)
	})

	t.Run("edit", func(t *testing.T) {
		if err := os.WriteFile(target, old, 0o644); err != nil {
			t.Fatal(err)
		}
		// Leave a few KiB: the edited copy of f.txt (100 KiB and more)
		// cannot be written beside the original.
		fillTmpfs(t, mnt, 8<<10)
		edits := `[{"old": "MARK: the one line", "new": "` + strings.Repeat("grown ", 10<<10) + `"}]`
		code, res, out, errs := harness.Run(t, harness.Cmd(bin, env, ws, "edit", "f.txt", "--edits", "-"), strings.NewReader(edits))
		if code != 1 || res.OK || res.Error.Code != "FS_NO_SPACE" {
			t.Errorf("edit on a full tmpfs: exit %d, want 1 with FS_NO_SPACE\nstdout: %s\nstderr: %s", code, out, errs)
		}
		assertUnchanged(t, ws, target, old)
	})
}

// fillTmpfs fills the tmpfs at mnt until about leave bytes are free, for
// the rest of the (sub)test.
func fillTmpfs(t *testing.T, mnt string, leave int64) {
	t.Helper()
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, freeBytes(t, mnt)-leave), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(filler) })
	t.Logf("%d bytes free on the tmpfs", freeBytes(t, mnt))
}

// assertUnchanged checks that path holds want exactly and that its folder
// holds nothing else.
func assertUnchanged(t *testing.T, dir, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed: %d bytes (sha256 %s), want the old %d bytes (sha256 %s)",
			filepath.Base(path), len(got), harness.SHA256Hex(got), len(want), harness.SHA256Hex(want))
	}
	if names := harness.DirNames(t, dir); len(names) != 1 || names[0] != filepath.Base(path) {
		t.Errorf("ls -A shows %q, want only %s (no temp file)", names, filepath.Base(path))
	}
}
