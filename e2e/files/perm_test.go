//go:build unix

package files

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// TestWritePermissionUnprivileged runs dsh-fs as an unprivileged user
// (uid and gid 65534) in a workspace that user owns, so that the folder
// never stands in the way: only the file's own permission and owner
// decide. A file the user could not overwrite with `sh -c '> f'` is not
// replaced either (FS_PERMISSION, nothing changed), and a file whose owner
// or group the user cannot give the replacement is refused rather than
// silently handed over. As root these rules cannot show: DAC lets root
// write any file, as it lets `>`.
func TestWritePermissionUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root to run dsh-fs as uid %d (euid %d)", harness.Nobody, os.Geteuid())
	}
	base, err := os.MkdirTemp("", "dsh-fs-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// The test's own temp folders are 0700: harness.Nobody could not reach a
	// workspace or a command inside them.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin", "dsh-fs")
	harness.CopyExecutable(t, harness.Bin(t), bin)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, harness.Nobody, harness.Nobody); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin",
		"DSH_FS_CWD=" + ws, "DSH_FS_TMP=false",
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "none"),
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	}

	for _, tc := range []struct {
		name     string
		uid, gid int
		perm     os.FileMode
		code     string // "" when the write passes
		// ownerOnly: the file is writable, but its owner or group cannot
		// be kept. A dry run decides the permission only, so it passes.
		ownerOnly bool
	}{
		{name: "own file", uid: harness.Nobody, gid: harness.Nobody, perm: 0o644},
		{name: "own read-only file", uid: harness.Nobody, gid: harness.Nobody, perm: 0o444, code: "FS_PERMISSION"},
		{name: "own file, no write bit but the group's", uid: harness.Nobody, gid: harness.Nobody, perm: 0o464, code: "FS_PERMISSION"},
		{name: "root's file", uid: 0, gid: 0, perm: 0o644, code: "FS_PERMISSION"},
		{name: "root's file, writable by all", uid: 0, gid: 0, perm: 0o666, code: "FS_PERMISSION", ownerOnly: true},
		{name: "own file in root's group", uid: harness.Nobody, gid: 0, perm: 0o664, code: "FS_PERMISSION", ownerOnly: true},
		{name: "another user's file, writable by all", uid: 1000, gid: 1000, perm: 0o666, code: "FS_PERMISSION", ownerOnly: true},
	} {
		for _, args := range [][]string{
			{"write", "f.txt", "--overwrite", "--content", "new\n"},
			{"edit", "f.txt", "--old", "old", "--new", "new"},
			{"write", "f.txt", "--overwrite", "--content", "new\n", "--dry-run"},
			{"edit", "f.txt", "--old", "old", "--new", "new", "--dry-run"},
		} {
			t.Run(tc.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				dry := args[len(args)-1] == "--dry-run"
				target := filepath.Join(ws, "f.txt")
				os.Remove(target)
				if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(target, tc.uid, tc.gid); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(target, tc.perm); err != nil {
					t.Fatal(err)
				}
				c := harness.Cmd(bin, env, ws, args...)
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: harness.Nobody, Gid: harness.Nobody, Groups: []uint32{}}}
				code, res, stdout, stderr := harness.Run(t, c, nil)
				want := tc.code
				if dry && tc.ownerOnly {
					want = ""
				}
				switch {
				case want == "" && code != 0:
					t.Fatalf("exit %d, %s %s; want success", code, stdout, stderr)
				case want != "" && (code != 1 || res.Error.Code != want):
					t.Fatalf("exit %d, %s %s; want exit 1, %s", code, stdout, stderr, want)
				}
				var st unix.Stat_t
				if err := unix.Lstat(target, &st); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(target)
				changed := string(b) != "old\n"
				if changed != (want == "" && !dry) {
					t.Errorf("content %q after exit %d", b, code)
				}
				if wantUID, wantGID := tc.uid, tc.gid; int(st.Uid) != wantUID || int(st.Gid) != wantGID || os.FileMode(st.Mode&0o7777) != tc.perm {
					t.Errorf("owner %d:%d mode %o after exit %d; want %d:%d %o, as before", st.Uid, st.Gid, st.Mode&0o7777, code, wantUID, wantGID, tc.perm)
				}
				if got := harness.DirNames(t, ws); strings.Join(got, " ") != "f.txt" {
					t.Errorf("workspace holds %v", got)
				}
			})
		}
	}
}
