//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestTrustedFileWritableByOthers (issue 21): a trusted file that
// someone but root or this user could have written is refused,
// FS_CONFIG_INVALID naming the file and the folder at fault, never left
// out; a 0644 file in private folders is read. Before: every case below
// loaded, the 0666 system file's mode: read-only included.
func TestTrustedFileWritableByOthers(t *testing.T) {
	type layout struct {
		name string
		// which of "system", "user", "requirements" holds the file
		file string
		// set changes the tree before the load; root is $ROOT
		set func(t *testing.T, root, path string)
		// fault is the folder (relative to $ROOT) named at fault, or
		// "file" for the file itself; "" when the file is trusted
		fault, why string
	}
	chmod := func(rel string, mode os.FileMode) func(*testing.T, string, string) {
		return func(t *testing.T, root, path string) {
			p := path
			if rel != "" {
				p = filepath.Join(root, rel)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []layout{
		{name: "system 0644", file: "system", set: chmod("", 0o644)},
		{name: "system 0400", file: "system", set: chmod("", 0o400)},
		{name: "system 0666", file: "system", set: chmod("", 0o666), fault: "file", why: "others may write it (mode 0666)"},
		{name: "system 0664", file: "system", set: chmod("", 0o664), fault: "file", why: "mode 0664"},
		{name: "system folder 0777", file: "system", set: chmod("etc", 0o777), fault: "etc", why: "may be written by others (mode 0777)"},
		{name: "system folder 0775", file: "system", set: chmod("etc", 0o775), fault: "etc", why: "mode 0775"},
		{name: "system folder sticky 1777", file: "system", set: chmod("etc", 0o777|os.ModeSticky)},
		{name: "requirements 0666", file: "requirements", set: chmod("", 0o666), fault: "file", why: "mode 0666"},
		{name: "user 0644", file: "user", set: chmod("", 0o644)},
		{name: "user 0666", file: "user", set: chmod("", 0o666), fault: "file", why: "mode 0666"},
		{name: "user ~/.config 0777", file: "user", set: chmod("home/.config", 0o777), fault: "home/.config", why: "mode 0777"},
		{name: "user home 0757", file: "user", set: chmod("home", 0o757), fault: "home", why: "mode 0757"},
		{name: "system file another user's", file: "system", set: func(t *testing.T, root, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the file to another user")
			}
			os.Chown(path, 23456, 23456)
		}, fault: "file", why: "owned by uid 23456"},
		{name: "system folder another user's", file: "system", set: func(t *testing.T, root, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the folder to another user")
			}
			os.Chown(filepath.Join(root, "etc"), 23456, 23456)
		}, fault: "etc", why: "owned by uid 23456"},
		{name: "system file a symlink into a folder others may write", file: "system", set: func(t *testing.T, root, path string) {
			open := filepath.Join(root, "open")
			os.Mkdir(open, 0o777)
			os.Chmod(open, 0o777)
			if err := os.Rename(path, filepath.Join(open, "config.yaml")); err != nil {
				t.Fatal(err)
			}
			os.Symlink(filepath.Join(open, "config.yaml"), path)
		}, fault: "open", why: "mode 0777"},
		{name: "system file a symlink through a link in a folder others may write", file: "system", set: func(t *testing.T, root, path string) {
			// config.yaml -> open/link -> real/config.yaml: others may
			// replace open/link.
			real, open := filepath.Join(root, "real"), filepath.Join(root, "open")
			os.Mkdir(real, 0o755)
			os.Mkdir(open, 0o777)
			os.Chmod(open, 0o777)
			if err := os.Rename(path, filepath.Join(real, "config.yaml")); err != nil {
				t.Fatal(err)
			}
			os.Symlink(filepath.Join(real, "config.yaml"), filepath.Join(open, "link"))
			os.Symlink("../open/link", path)
		}, fault: "open", why: "mode 0777"},
		{name: "system folder a symlink in a folder others may write", file: "system", set: func(t *testing.T, root, path string) {
			// $ROOT/etc -> $ROOT/real/etc, the link in $ROOT/open: the
			// link is what others may replace.
			real := filepath.Join(root, "real")
			os.Mkdir(real, 0o755)
			if err := os.Rename(filepath.Join(root, "etc"), filepath.Join(real, "etc")); err != nil {
				t.Fatal(err)
			}
			open := filepath.Join(root, "open")
			os.Mkdir(open, 0o777)
			os.Chmod(open, 0o777)
			os.Symlink(filepath.Join(real, "etc"), filepath.Join(open, "etc"))
			os.Symlink(filepath.Join(open, "etc"), filepath.Join(root, "etc"))
		}, fault: "open", why: "mode 0777"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			path := map[string]string{
				"system":       filepath.Join(root, "etc", "config.yaml"),
				"requirements": filepath.Join(root, "etc", "requirements.yaml"),
				"user":         filepath.Join(root, "home", ".config", "dsh-fs", "config.yaml"),
			}[tc.file]
			for _, d := range []string{"etc", "home/.config/dsh-fs", "ws"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(path, []byte("max_mode: read-only\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.set(t, root, path)
			s, err := Load(Source{
				LookupEnv: lookup(map[string]string{}),
				Getwd:     func() (string, error) { return filepath.Join(root, "ws"), nil },
				Locations: Locations{SystemDir: filepath.Join(root, "etc"), Home: func() (string, error) { return filepath.Join(root, "home"), nil }},
			})
			if tc.fault == "" {
				if err != nil {
					t.Fatalf("Load: %v, want the file read", err)
				}
				if got := string(s.Policy.MaxMode); got != "read-only" {
					t.Errorf("max_mode %s, want read-only from the trusted file", got)
				}
				return
			}
			if fserr.CodeOf(err) != fserr.ConfigInvalid {
				t.Fatalf("Load = %v (%s), want FS_CONFIG_INVALID", err, fserr.CodeOf(err))
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, tc.why) {
				t.Errorf("message %q, want it to name %s and say %q", msg, path, tc.why)
			}
			if tc.fault != "file" && !strings.Contains(msg, filepath.Join(root, tc.fault)+": ") {
				t.Errorf("message %q does not name the folder %s", msg, filepath.Join(root, tc.fault))
			}
		})
	}
}
