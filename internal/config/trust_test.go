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
