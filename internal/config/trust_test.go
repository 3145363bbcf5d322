package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
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

// TestExecConfigTrusted (issue 23): the file a trusted exec command line
// names with --config is the trusted base of that session (origin
// exec-config): it may widen the defaults, the managed requirements cap
// it, exec's own flags come after it, and the session sources still
// only narrow it. Without ConfigTrusted (dsh-fs mcp, any CLI call) the
// same file is a session file, as before. Before: every widening case
// below was "session cannot widen the policy (file …: approval)".
func TestExecConfigTrusted(t *testing.T) {
	exec := func(tc loadCase) loadCase {
		tc.trustedFlags, tc.configTrusted = true, true
		return tc
	}
	origin := func(s *Settings, k Key) Origin {
		for _, v := range s.Values {
			if v.Key == k {
				return v.Origin
			}
		}
		return Origin{}
	}
	for _, tc := range []loadCase{
		exec(loadCase{name: "approval from the exec file", session: "approval: trust\nmode: danger-full-access\n", check: func(t *testing.T, s *Settings) {
			o := origin(s, KeyApproval)
			if s.Policy.Approval != policy.ApprovalTrust || s.Policy.Mode != policy.DangerFullAccess || o.Source != KindExecConfig || o.Trust != TrustTrusted {
				t.Errorf("approval %s mode %s from %+v", s.Policy.Approval, s.Policy.Mode, o)
			}
			if len(s.Files) != 1 || s.Files[0].Source != KindExecConfig || !strings.HasSuffix(s.Files[0].Path, "/session.yaml") {
				t.Errorf("files %+v", s.Files)
			}
			if !slices.ContainsFunc(s.Policy.ConfigFiles, func(p string) bool { return strings.HasSuffix(p, "/session.yaml") }) {
				t.Errorf("the exec file is not among the protected config files: %q", s.Policy.ConfigFiles)
			}
		}}),
		exec(loadCase{name: "the exec file beats the user's", user: "diff_context: 7\napproval: never\n", session: "approval: trust\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.Approval != policy.ApprovalTrust || s.DiffContext != 7 {
				t.Errorf("approval %s diff_context %d", s.Policy.Approval, s.DiffContext)
			}
		}}),
		exec(loadCase{name: "exec's flags beat the exec file", session: "mode: danger-full-access\n", flags: []string{"--mode", "read-only"}, check: func(t *testing.T, s *Settings) {
			if o := origin(s, KeyMode); s.Policy.Mode != policy.ReadOnly || o.Source != KindCommandLine {
				t.Errorf("mode %s from %+v", s.Policy.Mode, o)
			}
		}}),
		exec(loadCase{name: "managed approval wins", session: "approval: trust\n", requirements: "approval: never\n", check: func(t *testing.T, s *Settings) {
			if o := origin(s, KeyApproval); s.Policy.Approval != policy.ApprovalNever || o.Source != KindManaged {
				t.Errorf("approval %s from %+v", s.Policy.Approval, o)
			}
		}}),
		exec(loadCase{name: "managed max_mode caps the exec file", session: "mode: danger-full-access\n", requirements: "max_mode: workspace-write\n", code: fserr.ConfigInvalid}),
		exec(loadCase{name: "a relative root in the exec file", session: "writable_roots: [build]\n", code: fserr.ConfigInvalid}),
		exec(loadCase{name: "approval command on the PATH", session: "approval: command\napproval_command: [approver]\n", code: fserr.ConfigInvalid}),
		exec(loadCase{name: "an exec file others may write", session: "mode: read-only\n", code: fserr.ConfigInvalid, prepare: func(t *testing.T, root string) {
			if err := os.Chmod(filepath.Join(root, "session.yaml"), 0o666); err != nil {
				t.Fatal(err)
			}
		}}),
		exec(loadCase{name: "a missing exec file", flags: []string{"--config", "$ROOT/nope.yaml"}, code: fserr.ConfigInvalid}),
		exec(loadCase{name: "DSH_FS_CONFIG beside it narrows", session: "mode: danger-full-access\n",
			files: map[string]string{"narrow.yaml": "mode: read-only\n"}, env: map[string]string{EnvConfig: "$ROOT/narrow.yaml"}, check: func(t *testing.T, s *Settings) {
				if o := origin(s, KeyMode); s.Policy.Mode != policy.ReadOnly || o.Source != KindFile {
					t.Errorf("mode %s from %+v", s.Policy.Mode, o)
				}
			}}),
		exec(loadCase{name: "DSH_FS_CONFIG beside it cannot widen", session: "approval: never\n",
			files: map[string]string{"wide.yaml": "approval: trust\n"}, env: map[string]string{EnvConfig: "$ROOT/wide.yaml"}, reason: policy.ReasonSessionWiden, matched: "file $ROOT/wide.yaml: approval"}),
		exec(loadCase{name: "DSH_FS_MODE cannot widen the exec file", session: "mode: read-only\n", env: map[string]string{"DSH_FS_MODE": "workspace-write"}, reason: policy.ReasonSessionWiden, matched: "DSH_FS_MODE=workspace-write"}),
		{name: "a trusted command line without ConfigTrusted (mcp)", trustedFlags: true, session: "approval: trust\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: approval"},
		{name: "ConfigTrusted without a trusted command line", configTrusted: true, session: "approval: trust\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err, root := runLoad(t, tc)
			switch {
			case tc.reason != "":
				var de *policy.DeniedError
				if !errors.As(err, &de) || de.Reason != tc.reason {
					t.Fatalf("err = %v, want a denial %q", err, tc.reason)
				}
				if want := strings.ReplaceAll(tc.matched, "$ROOT", root); de.Matched != want {
					t.Errorf("matched %q, want %q", de.Matched, want)
				}
			case tc.code != "":
				if fserr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), root) {
					t.Errorf("err = %v, want %s naming the file", err, tc.code)
				}
			case err != nil:
				t.Fatalf("refused: %v", err)
			case tc.check != nil:
				tc.check(t, s)
			}
		})
	}
}
