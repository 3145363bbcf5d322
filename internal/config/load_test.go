package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// loadCase is one call's sources: trusted files, a session file, the
// checkLoad loads tc's sources and checks the outcome it names: the
// error code, the denial's reason (and what it matched), or else its
// check of the settings.
func checkLoad(t *testing.T, tc loadCase) {
	t.Helper()
	s, err, root := runLoad(t, tc)
	switch {
	case tc.code != "":
		if fserr.CodeOf(err) != tc.code {
			t.Fatalf("err = %v, want %s", err, tc.code)
		}
	case tc.reason != "":
		var de *policy.DeniedError
		if !errors.As(err, &de) || de.Reason != tc.reason {
			t.Fatalf("err = %v, want a denial %q", err, tc.reason)
		}
		if want := strings.ReplaceAll(tc.matched, "$ROOT", root); tc.matched != "" && de.Matched != want {
			t.Errorf("matched %q, want %q", de.Matched, want)
		}
	case err != nil:
		t.Fatalf("refused: %v", err)
	case tc.check != nil:
		tc.check(t, s)
	}
}

// environment and the flags, with $ROOT the test's temp folder.
type loadCase struct {
	name         string
	system, user string // trusted files' YAML; "" for none
	requirements string
	session      string // a session file's YAML, named by --config
	files        map[string]string
	symlinks     map[string]string
	hardlinks    map[string]string // link => existing file, both under $ROOT
	noHome       bool              // the user database names no home
	env          map[string]string
	flags        []string
	trustedFlags bool // flags are a trusted command line (dsh-fs mcp)
	// configTrusted: --config is the trusted base of a session (dsh-fs exec)
	configTrusted bool
	// prepare, when set, changes the tree under root before the load
	prepare func(t *testing.T, root string)

	// want: a denial's reason and matched, an error code, or a check of
	// the settings.
	reason, matched string
	code            fserr.Code
	check           func(t *testing.T, s *Settings)
}

func runLoad(t *testing.T, tc loadCase) (*Settings, error, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	x := func(s string) string { return strings.ReplaceAll(s, "$ROOT", root) }
	for _, d := range []string{"ws/sub", "home", "etc", "allowed", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, body string) {
		if body == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(x(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "etc/config.yaml"), tc.system)
	write(filepath.Join(root, "etc/requirements.yaml"), tc.requirements)
	write(filepath.Join(root, "home/.config/dsh-fs/config.yaml"), tc.user)
	write(filepath.Join(root, "session.yaml"), tc.session)
	for name, body := range tc.files {
		write(filepath.Join(root, name), body)
	}
	for name, target := range tc.hardlinks {
		if err := os.Link(filepath.Join(root, target), filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range tc.symlinks {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String(FlagMode, "", "")
	fs.String(FlagCwd, "", "")
	fs.StringArray(FlagWritableRoot, nil, "")
	fs.Bool(FlagTmp, true, "")
	fs.String(FlagConfig, "", "")
	fs.String(FlagEnforce, "", "")
	MarkSetting(fs, FlagMode, FlagCwd, FlagWritableRoot, FlagTmp, FlagEnforce)
	args := []string{}
	for _, a := range tc.flags {
		args = append(args, x(a))
	}
	if tc.session != "" {
		args = append(args, "--config", filepath.Join(root, "session.yaml"))
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if tc.prepare != nil {
		tc.prepare(t, root)
	}
	env := map[string]string{}
	for k, v := range tc.env {
		env[k] = x(v)
	}
	s, err := Load(Source{
		Flags:         fs,
		LookupEnv:     lookup(env),
		Getwd:         func() (string, error) { return filepath.Join(root, "ws"), nil },
		FlagsTrusted:  tc.trustedFlags,
		ConfigTrusted: tc.configTrusted,
		Locations: Locations{SystemDir: filepath.Join(root, "etc"), Home: func() (string, error) {
			if tc.noHome {
				return "", errors.New("no home in the user database")
			}
			return filepath.Join(root, "home"), nil
		}},
	})
	return s, err, root
}

// TestSessionNarrowsNeverWidens: every lever a call's flags, variables or
// session file hold may narrow the trusted policy; each that would widen
// it is a denial naming its source.
func TestSessionNarrowsNeverWidens(t *testing.T) {
	lockedDown := "max_mode: workspace-write\napproval: never\ntmp: false\n"
	for _, tc := range []loadCase{
		// Widening, each refused with its source.
		{name: "--mode", flags: []string{"--mode", "danger-full-access"}, reason: policy.ReasonSessionWiden, matched: "--mode danger-full-access"},
		{name: "DSH_FS_MODE", env: map[string]string{"DSH_FS_MODE": "danger-full-access"}, reason: policy.ReasonSessionWiden, matched: "DSH_FS_MODE=danger-full-access"},
		{name: "--mode under a locked-down trusted file", system: lockedDown, flags: []string{"--mode", "danger-full-access"}, reason: policy.ReasonSessionWiden},
		{name: "session file mode", session: "mode: danger-full-access\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: mode"},
		{name: "session file approval", session: "approval: trust\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: approval"},
		{name: "session file narrower max_mode is still trusted-only", session: "max_mode: read-only\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: max_mode"},
		{name: "session file approval_command", session: "approval_command: [\"true\"]\n", reason: policy.ReasonSessionWiden},
		{name: "session file allow_roots", session: "allow_roots: [\"/\"]\n", reason: policy.ReasonSessionWiden},
		{name: "session file workspaces", session: "workspaces: [\"/\"]\n", reason: policy.ReasonSessionWiden},
		{name: "session file dropping a protected glob", session: "protected: [\".git/**\"]\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: protected"},
		{name: "--tmp over a trusted tmp: false", system: "tmp: false\n", flags: []string{"--tmp"}, reason: policy.ReasonSessionWiden, matched: "--tmp"},
		{name: "DSH_FS_TMP over a managed tmp: false", requirements: "tmp: false\n", env: map[string]string{"DSH_FS_TMP": "true"}, reason: policy.ReasonSessionWiden, matched: "DSH_FS_TMP=true"},
		{name: "--enforce off", flags: []string{"--enforce", "off"}, reason: policy.ReasonSessionWiden, matched: "--enforce off"},
		{name: "--writable-root outside", system: "tmp: false\n", flags: []string{"--writable-root", ".."}, reason: policy.ReasonSessionWiden, matched: "--writable-root .."},
		{name: "DSH_FS_WRITABLE_ROOTS outside", system: "tmp: false\n", env: map[string]string{"DSH_FS_WRITABLE_ROOTS": "$ROOT/ws/sub:$ROOT/outside"}, reason: policy.ReasonSessionWiden, matched: "DSH_FS_WRITABLE_ROOTS=$ROOT/outside"},
		{name: "--cwd above a trusted cwd", system: "cwd: $ROOT/ws\n", flags: []string{"--cwd", ".."}, reason: policy.ReasonSessionWiden, matched: "--cwd .."},
		{name: "session file allow_unix_sockets adding a socket", system: "allow_unix_sockets: [/run/a.sock]\n",
			session: "allow_unix_sockets: [/run/a.sock, /run/docker.sock]\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: allow_unix_sockets"},
		{name: "session file read_home adding an entry", session: "read_home: [\"~/.gitconfig\", \"~/.ssh\"]\n",
			reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: read_home"},
		{name: "session file allow_unix_sockets over none", session: "allow_unix_sockets: [\"/run/user/*/bus\"]\n", reason: policy.ReasonSessionWiden},
		// The toolchain caches (issue 23): a session drops caches, never adds one.
		{name: "session file caches adding a cache", system: "caches: [/srv/cache]\n",
			session: "caches: [/srv/cache, /home/x/.ssh]\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: caches"},
		{name: "session file caches_from_toolchains back on", system: "caches_from_toolchains: false\n",
			session: "caches_from_toolchains: true\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: caches_from_toolchains"},
		{name: "session file allow_io_uring on", session: "allow_io_uring: true\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: allow_io_uring"},
		{name: "session file caches_writable direct", session: "caches_writable: direct\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: caches_writable"},
		{name: "session file caches_writable overlay over off", system: "caches_writable: \"off\"\n", session: "caches_writable: overlay\n", reason: policy.ReasonSessionWiden},

		// Narrowing, each allowed.
		{name: "--mode read-only", flags: []string{"--mode", "read-only"}, check: func(t *testing.T, s *Settings) {
			if s.Policy.Mode != policy.ReadOnly {
				t.Errorf("mode %s", s.Policy.Mode)
			}
		}},
		{name: "--tmp=false", flags: []string{"--tmp=false"}, check: func(t *testing.T, s *Settings) {
			if s.Policy.Tmp {
				t.Error("tmp still on")
			}
		}},
		{name: "--enforce landlock", flags: []string{"--enforce", "landlock"}},
		{name: "session file caches narrowed", system: "caches: [/srv/a, \"~/cache\"]\ncaches_writable: direct\n",
			session: "caches: [/srv/a]\ncaches_from_toolchains: false\ncaches_writable: \"off\"\n", check: func(t *testing.T, s *Settings) {
				if c := s.Caches; strings.Join(c.Paths, ",") != "/srv/a" || c.FromToolchains || c.Writable != policy.CachesOff {
					t.Errorf("caches %+v", c)
				}
			}},
		{name: "trusted caches expand ~", system: "caches: [\"~/cache\"]\n", check: func(t *testing.T, s *Settings) {
			if c := s.Caches; len(c.Paths) != 1 || !strings.HasSuffix(c.Paths[0], "/cache") || strings.HasPrefix(c.Paths[0], "~") ||
				!c.FromToolchains || c.Writable != policy.CachesOverlay {
				t.Errorf("caches %+v", c)
			}
		}},
		{name: "session file read_home dropping entries", session: "read_home: [\"~/.gitconfig\"]\n", check: func(t *testing.T, s *Settings) {
			if got := s.Policy.ReadHome; len(got) != 1 || got[0] != "~/.gitconfig" {
				t.Errorf("read_home %q", got)
			}
		}},
		{name: "session file allow_unix_sockets dropping a socket", system: "allow_unix_sockets: [/run/a.sock, \"~/.gnupg/S.*\"]\n",
			session: "allow_unix_sockets: [\"~/.gnupg/S.*\"]\n", check: func(t *testing.T, s *Settings) {
				if got := strings.Join(s.Policy.AllowUnixSockets, ","); got != "~/.gnupg/S.*" {
					t.Errorf("allow_unix_sockets %s", got)
				}
			}},
		{name: "session protected_extra and deny_read add to the trusted ones", system: "deny_read: [\"~/.ssh/**\"]\n",
			session: "protected_extra: [\"notes/**\"]\ndeny_read: [\"**/.env\"]\nprotected: [\"**/.git/**\", \".dsh-fs/**\", \".mcp.json\", \".vscode/**\", \".idea/**\", \".claude/**\", \".codex/**\", \".agents/**\", \"**/.bashrc\", \"**/.bash_profile\", \"**/.zshrc\", \"**/.zprofile\", \"**/.profile\", \"build/**\"]\n",
			check: func(t *testing.T, s *Settings) {
				if got := strings.Join(s.Policy.DenyRead, ","); got != "~/.ssh/**,**/.env" {
					t.Errorf("deny_read %s", got)
				}
				if p := strings.Join(s.Policy.Protected, ","); !strings.Contains(p, "build/**") || !strings.HasSuffix(p, "notes/**") {
					t.Errorf("protected %s", p)
				}
			}},
		{name: "a session root beneath allow_roots", system: "tmp: false\nallow_roots: [$ROOT/allowed]\n", flags: []string{"--writable-root", "$ROOT/allowed/build"}},
		{name: "a session root beneath the workspace", system: "tmp: false\n", flags: []string{"--writable-root", "sub"}},
		{name: "--cwd beneath a trusted cwd", system: "cwd: $ROOT/ws\n", flags: []string{"--cwd", "sub"}, check: func(t *testing.T, s *Settings) {
			if !strings.HasSuffix(s.Policy.Cwd, "/ws/sub") {
				t.Errorf("cwd %s", s.Policy.Cwd)
			}
		}},
		{name: "a trusted mode is no session's widening", user: "mode: danger-full-access\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.Mode != policy.DangerFullAccess || s.Values[0].Source != KindUser || s.Values[0].Trust != TrustTrusted {
				t.Errorf("mode %s from %+v", s.Policy.Mode, s.Values[0].Origin)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}

// TestTrustedSources: the user's file beats the system's, the managed
// requirements cap both, and what a trusted file may say is checked.
func TestTrustedSources(t *testing.T) {
	for _, tc := range []loadCase{
		{name: "user beats system", system: "diff_context: 5\napproval: never\n", user: "diff_context: 7\n", check: func(t *testing.T, s *Settings) {
			if s.DiffContext != 7 || s.Policy.Approval != policy.ApprovalNever {
				t.Errorf("diff_context %d approval %s", s.DiffContext, s.Policy.Approval)
			}
		}},
		{name: "managed max_mode caps the user's", user: "max_mode: danger-full-access\n", requirements: "max_mode: workspace-write\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.MaxMode != policy.WorkspaceWrite {
				t.Errorf("max_mode %s", s.Policy.MaxMode)
			}
		}},
		{name: "managed approval replaces the user's", user: "approval: trust\n", requirements: "approval: never\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.Approval != policy.ApprovalNever {
				t.Errorf("approval %s", s.Policy.Approval)
			}
		}},
		{name: "managed deny_read adds to the user's", user: "deny_read: [a]\n", requirements: "deny_read: [b]\n", check: func(t *testing.T, s *Settings) {
			if got := strings.Join(s.Policy.DenyRead, ","); got != "a,b" {
				t.Errorf("deny_read %s", got)
			}
		}},
		{name: "the default mode stays within a trusted max_mode", system: "max_mode: read-only\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.Mode != policy.ReadOnly {
				t.Errorf("mode %s", s.Policy.Mode)
			}
		}},
		{name: "a user mode above the managed max_mode", user: "mode: danger-full-access\n", requirements: "max_mode: workspace-write\n", code: fserr.ConfigInvalid},
		{name: "a key requirements do not set", requirements: "mode: read-only\n", code: fserr.ConfigInvalid},
		{name: "a relative trusted root", system: "writable_roots: [build]\n", code: fserr.ConfigInvalid},
		{name: "approval command without a command", system: "approval: command\n", code: fserr.ConfigInvalid},
		{name: "approval command on the PATH", system: "approval: command\napproval_command: [approver]\n", code: fserr.ConfigInvalid},
		{name: "a ~ glob with no home to expand it", system: "deny_read: [\"~/.ssh/**\"]\n", noHome: true, code: fserr.ConfigInvalid},
		{name: "no home, no ~ glob: fine", system: "deny_read: [\"**/.env\"]\n", noHome: true, check: func(t *testing.T, s *Settings) {
			if s.Policy.Home != "" {
				t.Errorf("home %q", s.Policy.Home)
			}
		}},
		{name: "malformed deny_read glob", system: "deny_read: [\"secre[t/**\"]\n", code: fserr.ConfigInvalid},
		{name: "malformed protected glob", system: "protected: [\"a[\"]\n", code: fserr.ConfigInvalid},
		{name: "malformed protected_extra glob", session: "protected_extra: [\"a[\"]\n", code: fserr.ConfigInvalid},
		{name: "malformed workspaces glob", system: "workspaces: [\"/w[\"]\n", code: fserr.ConfigInvalid},
		{name: "malformed allow_unix_sockets glob", system: "allow_unix_sockets: [\"/run/a[\"]\n", code: fserr.ConfigInvalid},
		{name: "a read_home glob", system: "read_home: [\"~/.config/*\"]\n", code: fserr.ConfigInvalid},
		{name: "a read_home entry outside the home", system: "read_home: [/etc/passwd]\n", code: fserr.ConfigInvalid},
		{name: "a relative allow_unix_sockets entry", system: "allow_unix_sockets: [agent.sock]\n", code: fserr.ConfigInvalid},
		{name: "a relative caches entry", system: "caches: [build/cache]\n", code: fserr.ConfigInvalid},
		{name: "an unknown caches_writable", system: "caches_writable: always\n", code: fserr.ConfigInvalid},
		{name: "an allow_unix_sockets ~ entry with no home", system: "allow_unix_sockets: [\"~/.gnupg/S.gpg-agent\"]\n", noHome: true, code: fserr.ConfigInvalid},
		{name: "managed allow_io_uring off is a ceiling", user: "allow_io_uring: true\n", requirements: "allow_io_uring: false\n", check: func(t *testing.T, s *Settings) {
			if s.Policy.AllowIoUring {
				t.Error("allow_io_uring on under a managed false")
			}
		}},
		{name: "managed allow_unix_sockets replaces the user's", user: "allow_unix_sockets: [/run/a.sock]\n", requirements: "allow_unix_sockets: []\n", check: func(t *testing.T, s *Settings) {
			if len(s.Policy.AllowUnixSockets) != 0 {
				t.Errorf("allow_unix_sockets %q", s.Policy.AllowUnixSockets)
			}
		}},
		{name: "trusted files are protected whether or not they exist", check: func(t *testing.T, s *Settings) {
			got := strings.Join(s.Policy.TrustedFiles, ",")
			for _, want := range []string{"/etc/config.yaml", "/etc/requirements.yaml", "/home/.config/dsh-fs/config.yaml"} {
				if !strings.Contains(got, want) {
					t.Errorf("trusted files %s lack %s", got, want)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err, _ := runLoad(t, tc)
			if tc.code != "" {
				if fserr.CodeOf(err) != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

// TestCommandLineSource: the command line of dsh-fs mcp, written by the
// harness, is a trusted source: it may set what a session flag may not,
// below the managed requirements, which still cap it.
func TestCommandLineSource(t *testing.T) {
	for _, tc := range []loadCase{
		{name: "a root outside allow_roots is trusted", trustedFlags: true, flags: []string{"--writable-root", "/srv/dsh-fs-test"}, check: func(t *testing.T, s *Settings) {
			if got := strings.Join(s.Policy.WritableRoots, ","); !strings.HasSuffix(got, "/srv/dsh-fs-test") {
				t.Errorf("writable roots %s", got)
			}
			for _, v := range s.Values {
				if v.Key == KeyWritableRoots && (v.Source != KindCommandLine || v.Trust != TrustTrusted || v.Name != "--writable-root") {
					t.Errorf("origin %+v", v.Origin)
				}
			}
		}},
		{name: "the same root as a session flag widens", flags: []string{"--writable-root", "/srv/dsh-fs-test"}, reason: policy.ReasonSessionWiden, matched: "--writable-root /srv/dsh-fs-test"},
		{name: "a relative cwd is the process's directory's, pinned", trustedFlags: true, flags: []string{"--cwd", "sub"}, check: func(t *testing.T, s *Settings) {
			if !strings.HasSuffix(s.Policy.Cwd, "/ws/sub") || !s.Policy.CwdTrusted {
				t.Errorf("cwd %s trusted %v", s.Policy.Cwd, s.Policy.CwdTrusted)
			}
		}},
		{name: "a wider mode than the system's", trustedFlags: true, system: "mode: read-only\n", flags: []string{"--mode", "workspace-write"}, check: func(t *testing.T, s *Settings) {
			if s.Policy.Mode != policy.WorkspaceWrite {
				t.Errorf("mode %s", s.Policy.Mode)
			}
		}},
		{name: "the managed max_mode still caps it", trustedFlags: true, requirements: "max_mode: read-only\n", flags: []string{"--mode", "workspace-write"}, code: fserr.ConfigInvalid},
		{name: "the environment still only narrows it", trustedFlags: true, flags: []string{"--mode", "read-only"}, env: map[string]string{"DSH_FS_MODE": "workspace-write"}, reason: policy.ReasonSessionWiden, matched: "DSH_FS_MODE=workspace-write"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}

// TestSessionConfigSecrets: a session config file that is a secret is
// refused unread, and no config error quotes what a file holds.
func TestSessionConfigSecrets(t *testing.T) {
	secret := "AKIAEXAMPLESECRET"
	for _, tc := range []struct {
		name, body string
		code       fserr.Code
	}{
		{"not YAML", "aws_secret_access_key = " + secret + "\n\t- [\n", fserr.ConfigInvalid},
		{"a scalar", secret + "\n", fserr.ConfigInvalid},
		{"a wrong type", "mode: [" + secret + "]\n", fserr.ConfigInvalid},
		{"a bad name", "mode: " + secret + "\n", fserr.ConfigInvalid},
		{"a malformed glob", "deny_read: [\"" + secret + "[\"]\n", fserr.ConfigInvalid},
		{"a secret as a key", secret + "/x: 1\n", fserr.ConfigInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err, _ := runLoad(t, loadCase{session: tc.body})
			if fserr.CodeOf(err) != tc.code || strings.Contains(err.Error(), secret) {
				t.Errorf("err = %v, want %s without the secret", err, tc.code)
			}
		})
	}
	for _, name := range []string{"$ROOT/home/.ssh/id", "$ROOT/ws/key-link", "$ROOT/ws/key-hardlink"} {
		t.Run("deny_read file "+filepath.Base(name), func(t *testing.T) {
			_, err, _ := runLoad(t, loadCase{system: "deny_read: [\"~/.ssh/**\"]\n", flags: []string{"--config", name},
				files: map[string]string{"home/.ssh/id": "mode: " + secret + "\n"}, symlinks: map[string]string{"ws/key-link": "../home/.ssh/id"},
				hardlinks: map[string]string{"ws/key-hardlink": "home/.ssh/id"}})
			var de *policy.DeniedError
			if !errors.As(err, &de) || de.Reason != policy.ReasonDenyRead || strings.Contains(err.Error(), secret) {
				t.Errorf("err = %v, want a deny_read denial without the secret", err)
			}
		})
	}
}
