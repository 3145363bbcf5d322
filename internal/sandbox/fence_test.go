package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// fenceLayout is the tree every fence case starts from: the workspace ws,
// a sibling whose name has ws as a string prefix, and an outside folder.
var fenceLayout = []string{
	"ws/",
	"ws/f",
	"ws/d/",
	"ws/d/g",
	"ws_evil/",
	"out/",
	"out/x",
}

// testPolicy is the policy of the fence tests: the workspace is the only
// writable root, with the default protected paths, the widest ceiling and
// no escalation.
func testPolicy(root string, mode policy.Mode) policy.Policy {
	return policy.Policy{
		Mode:      mode,
		Cwd:       filepath.Join(root, "ws"),
		Tmp:       false,
		Protected: policy.DefaultProtected,
		MaxMode:   policy.DangerFullAccess,
		Approval:  policy.ApprovalNever,
	}
}

// expandRoot replaces "$ROOT" in s by the temp root.
func expandRoot(s, root string) string { return strings.ReplaceAll(s, "$ROOT", root) }

// writeFile writes content to root/name, for the cases that need a file
// other than the layout's "x".
func writeFile(t testing.TB, root, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(expandRoot(content, root)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// deniedAs returns err as a *DeniedError, failing the test if it is not.
func deniedAs(t testing.TB, err error) *policy.DeniedError {
	t.Helper()
	var de *policy.DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("want a *DeniedError, got %T %v", err, err)
	}
	if c := fserr.CodeOf(err); c != fserr.SandboxDenied {
		t.Errorf("code %s, want %s", c, fserr.SandboxDenied)
	}
	return de
}

func TestCheckWrite(t *testing.T) {
	type tcase struct {
		name   string
		mode   policy.Mode // default WorkspaceWrite
		layout []string
		setup  func(t *testing.T, root string, p *policy.Policy)
		path   string // "$ROOT" the temp root; relative to ws
		skip   string // a known bug: the test is skipped with this message

		reason  string // "" when the write passes
		needed  policy.Mode
		matched string // the protected glob or path; "$ROOT" expanded
		root    string // on success: the matched root, relative to the temp root
		rel     string
	}
	roots := func(rs ...string) func(*testing.T, string, *policy.Policy) {
		return func(_ *testing.T, root string, p *policy.Policy) {
			for _, r := range rs {
				p.WritableRoots = append(p.WritableRoots, expandRoot(r, root))
			}
		}
	}
	cases := []tcase{
		// Containment.
		{name: "inside", path: "f", root: "ws", rel: "f"},
		{name: "inside, new", path: "new/deeper/x", root: "ws", rel: "new/deeper/x"},
		{name: "inside, absolute", path: "$ROOT/ws/d/g", root: "ws", rel: "d/g"},
		{name: "the root itself", path: ".", root: "ws", rel: "."},
		{name: "prefix sibling", path: "$ROOT/ws_evil/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "prefix sibling, relative", path: "../ws_evil/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "prefix sibling itself", path: "../ws_evil", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "dotdot out", path: "../out/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "dotdot out from a subfolder", path: "d/../../out/new", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "parent of the root", path: "..", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "missing then dotdot out", path: "missing/../../out/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "absolute symlink out", layout: []string{"ws/abs => $ROOT/out"}, path: "abs/new", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "relative symlink out", layout: []string{"ws/rel => ../out"}, path: "rel/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "symlink to an outside file", layout: []string{"ws/lx => ../out/x"}, path: "lx", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "symlink to the prefix sibling", layout: []string{"ws/ev => ../ws_evil"}, path: "ev/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "link/.. climbs from the target", layout: []string{"ws/d/l => ../../out/x"}, path: "d/l/../y", reason: reasonNotDir, needed: ""},
		{name: "link to folder, then dotdot", layout: []string{"ws/d/l => ../../out"}, path: "d/l/../new", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "symlink inside to inside", layout: []string{"ws/in => d"}, path: "in/g", root: "ws", rel: "d/g"},
		{name: "absolute symlink inside to inside", layout: []string{"ws/in => $ROOT/ws/d"}, path: "in/new", root: "ws", rel: "d/new"},
		{name: "symlink out and back in", layout: []string{"ws/loop => ../ws/d"}, path: "loop/g", root: "ws", rel: "d/g"},
		{name: "dangling symlink to outside", layout: []string{"ws/dang => ../out/none"}, path: "dang", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "dangling absolute symlink to outside", layout: []string{"ws/dang => /nonexistent-dsh-fs-test/x"}, path: "dang", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "dangling symlink to inside", layout: []string{"ws/dang => d/none"}, path: "dang", root: "ws", rel: "d/none"},

		// Default protected paths.
		{name: ".git/config", path: ".git/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git"},
		{name: "nested .git hook", path: "sub/.git/hooks/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/sub/.git"},
		{name: ".git itself", path: ".git", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git"},
		{name: ".git through a symlink", layout: []string{"ws/.git/", "ws/g => .git"}, path: "g/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git"},
		{name: ".vscode/settings.json", path: ".vscode/settings.json", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".vscode/**"},
		{name: ".vscode itself", path: ".vscode", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".vscode/**"},
		{name: ".idea", path: ".idea/workspace.xml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".idea/**"},
		{name: ".mcp.json", path: ".mcp.json", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".mcp.json"},
		{name: ".bashrc at the top", path: ".bashrc", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.bashrc"},
		{name: ".zshrc deep", path: "a/b/.zshrc", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.zshrc"},
		{name: ".bash_profile", path: "u/.bash_profile", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.bash_profile"},
		{name: ".zprofile", path: ".zprofile", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.zprofile"},
		{name: ".profile", path: "home/.profile", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.profile"},
		{name: ".dsh-fs", path: ".dsh-fs/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".dsh-fs/**"},
		{name: ".claude", path: ".claude/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".claude/**"},
		{name: ".codex", path: ".codex/config.toml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".codex/**"},
		{name: ".agents", path: ".agents/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".agents/**"},
		{name: ".gitignore is not protected", path: ".gitignore", root: "ws", rel: ".gitignore"},
		{name: ".github is not protected", path: ".github/x", root: "ws", rel: ".github/x"},
		{name: ".gitmodules is not protected", path: "sub/.gitmodules", root: "ws", rel: "sub/.gitmodules"},
		{name: "nested .mcp.json is not protected", path: "sub/.mcp.json", root: "ws", rel: "sub/.mcp.json"},
		{name: ".vscodex is not protected", path: ".vscodex/x", root: "ws", rel: ".vscodex/x"},
		{name: ".bashrc.d is not protected", path: ".bashrc.d/x", root: "ws", rel: ".bashrc.d/x"},
		{
			// The Android repo tool checks projects out with
			// p/.git => ../.repo/projects/p.git: git runs the hooks found
			// through the link.
			name:   "symlinked .git folder",
			layout: []string{"ws/.repo/projects/p.git/hooks/", "ws/p/.git => ../.repo/projects/p.git"},
			path:   "p/.git/hooks/pre-commit", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/p/.git",
		},
		{
			name:   "symlinked .vscode folder",
			layout: []string{"ws/editor/", "ws/.vscode => editor"},
			path:   ".vscode/tasks.json", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".vscode/**",
		},

		// A git directory is recognized by what it holds, whatever its name.
		{
			name:   "bare repository by content",
			layout: []string{"ws/vendor/x.git/HEAD", "ws/vendor/x.git/objects/", "ws/vendor/x.git/refs/"},
			path:   "vendor/x.git/hooks/pre-commit", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/vendor/x.git",
		},
		{
			name:   "worktree gitdir by content",
			layout: []string{"ws/wt/HEAD", "ws/wt/commondir"},
			path:   "wt/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/wt",
		},
		{
			name:   "HEAD alone is no repository",
			layout: []string{"ws/docs/HEAD"},
			path:   "docs/config", root: "ws", rel: "docs/config",
		},

		// A .git pointer file protects its gitdir, even inside another root.
		{
			name: "gitdir of a .git pointer", layout: []string{"real-gitdir/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: ../real-gitdir\n")
				p.WritableRoots = []string{filepath.Join(root, "real-gitdir")}
			},
			path: "$ROOT/real-gitdir/hooks/pre-commit", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/real-gitdir",
		},
		{
			name: "gitdir itself", layout: []string{"real-gitdir/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: ../real-gitdir\n")
				p.WritableRoots = []string{filepath.Join(root, "real-gitdir")}
			},
			path: "$ROOT/real-gitdir", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/real-gitdir",
		},
		{
			name: "absolute gitdir", layout: []string{"store/repo/worktrees/w/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: $ROOT/store/repo/worktrees/w")
				p.WritableRoots = []string{filepath.Join(root, "store")}
			},
			path: "$ROOT/store/repo/worktrees/w/commondir", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/store/repo/worktrees/w",
		},
		{
			// Its data is git's to write: a commit in the worktree moves
			// its HEAD.
			name: "absolute gitdir's HEAD is writable", layout: []string{"store/repo/worktrees/w/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: $ROOT/store/repo/worktrees/w")
				p.WritableRoots = []string{filepath.Join(root, "store")}
			},
			path: "$ROOT/store/repo/worktrees/w/HEAD", root: "store", rel: "repo/worktrees/w/HEAD",
		},
		{
			name: "beside the gitdir is writable", layout: []string{"store/repo/worktrees/w/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: $ROOT/store/repo/worktrees/w")
				p.WritableRoots = []string{filepath.Join(root, "store")}
			},
			path: "$ROOT/store/repo/worktrees/w2/HEAD", root: "store", rel: "repo/worktrees/w2/HEAD",
		},
		{
			name: "the pointer file itself", layout: []string{"real-gitdir/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: ../real-gitdir\n")
			},
			path: ".git", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git",
		},

		{
			name: ".git symlink at the top protects its target", layout: []string{"real-gitdir/hooks/", "ws/.git => ../real-gitdir"},
			setup: roots("$ROOT/real-gitdir"),
			path:  "$ROOT/real-gitdir/hooks/pre-commit", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/real-gitdir",
		},
		{
			// git reads a worktree's hooks and config from its commondir.
			name:   "commondir of a worktree gitdir",
			layout: []string{"store/proj.git/worktrees/w/", "store/proj.git/hooks/"},
			setup: func(t *testing.T, root string, p *policy.Policy) {
				writeFile(t, root, "ws/.git", "gitdir: $ROOT/store/proj.git/worktrees/w\n")
				writeFile(t, root, "store/proj.git/worktrees/w/commondir", "../..\n")
				p.WritableRoots = []string{filepath.Join(root, "store")}
			},
			path: "$ROOT/store/proj.git/hooks/post-checkout", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/store/proj.git",
		},

		// The loaded config file.
		{
			name: "config file", layout: []string{"ws/dsh-fs.yaml"},
			setup: func(_ *testing.T, root string, p *policy.Policy) {
				p.ConfigFiles = []string{filepath.Join(root, "ws/dsh-fs.yaml")}
			},
			path: "dsh-fs.yaml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/dsh-fs.yaml",
		},
		{
			name: "config file through a symlink", layout: []string{"ws/conf/dsh-fs.yaml", "ws/c => conf/dsh-fs.yaml"},
			setup: func(_ *testing.T, root string, p *policy.Policy) {
				p.ConfigFiles = []string{filepath.Join(root, "ws/c")}
			},
			path: "conf/dsh-fs.yaml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/conf/dsh-fs.yaml",
		},
		{
			name: "relative config file", layout: []string{"ws/cfg.yaml"},
			setup: func(_ *testing.T, _ string, p *policy.Policy) { p.ConfigFiles = []string{"cfg.yaml"} },
			path:  "$ROOT/ws/cfg.yaml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/cfg.yaml",
		},
		{
			name: "a trusted config path that does not exist yet", layout: []string{"ws/"},
			setup: func(_ *testing.T, root string, p *policy.Policy) {
				p.TrustedFiles = []string{filepath.Join(root, "ws/etc/dsh-fs/requirements.yaml")}
			},
			path: "etc/dsh-fs/requirements.yaml", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/etc/dsh-fs/requirements.yaml",
		},
		{
			name: "a protected entry naming a folder covers what is in it", layout: []string{"ws/secrets/"},
			setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = append(p.Protected, "secrets") },
			path:  "secrets/deep/key", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "secrets",
		},
		{
			name: "an absolute protected glob", layout: []string{"ws/gen/"},
			setup: func(_ *testing.T, root string, p *policy.Policy) {
				p.Protected = append(p.Protected, root+"/ws/gen/*.lock")
			},
			path: "gen/a.lock", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/gen/*.lock",
		},
		{
			name: "beside the config file", layout: []string{"ws/dsh-fs.yaml"},
			setup: func(_ *testing.T, root string, p *policy.Policy) {
				p.ConfigFiles = []string{filepath.Join(root, "ws/dsh-fs.yaml")}
			},
			path: "dsh-fs.yaml.bak", root: "ws", rel: "dsh-fs.yaml.bak",
		},

		// The bare-repository triple.
		{name: "HEAD and refs: objects completes", layout: []string{"ws/HEAD", "ws/refs/"}, path: "objects/x", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess},
		{name: "HEAD and refs: objects itself", layout: []string{"ws/HEAD", "ws/refs/"}, path: "objects", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess},
		{name: "HEAD and objects: refs completes", layout: []string{"ws/HEAD", "ws/objects/"}, path: "refs/heads/main", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess},
		{name: "objects and refs: HEAD completes", layout: []string{"ws/objects/", "ws/refs/"}, path: "HEAD", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess},
		{
			name: "HEAD and commondir complete a repository", layout: []string{"ws/HEAD", "ws/sub/objects/", "ws/sub/refs/"},
			path: "commondir", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess,
		},
		{name: "only HEAD", layout: []string{"ws/HEAD"}, path: "objects/x", root: "ws", rel: "objects/x"},
		{name: "only refs", layout: []string{"ws/refs/"}, path: "objects/x", root: "ws", rel: "objects/x"},
		{name: "triple, unrelated file", layout: []string{"ws/HEAD", "ws/refs/"}, path: "src/main.go", root: "ws", rel: "src/main.go"},
		{name: "nested sub/HEAD", layout: []string{"ws/sub/HEAD", "ws/sub/refs/"}, path: "sub/objects/x", root: "ws", rel: "sub/objects/x"},
		{name: "triple in a nested writable root", layout: []string{"ws/sub/HEAD", "ws/sub/refs/"}, setup: roots("sub"),
			path: "sub/objects/x", reason: policy.ReasonBareRepo, needed: policy.DangerFullAccess},

		// Read-only mode.
		{name: "read-only inside", mode: policy.ReadOnly, path: "f", reason: policy.ReasonReadOnly, needed: policy.WorkspaceWrite},
		{name: "read-only outside", mode: policy.ReadOnly, path: "../out/x", reason: policy.ReasonReadOnly, needed: policy.DangerFullAccess},
		{name: "read-only protected", mode: policy.ReadOnly, path: ".git/config", reason: policy.ReasonReadOnly, needed: policy.DangerFullAccess},

		// Danger-full-access: no fence (nothing is written).
		{name: "danger outside", mode: policy.DangerFullAccess, path: "/etc/hosts"},
		{name: "danger protected", mode: policy.DangerFullAccess, path: ".git/config"},
		{name: "danger through symlink out", mode: policy.DangerFullAccess, layout: []string{"ws/abs => $ROOT/out"}, path: "abs/x"},

		// Replacing and extending the protected list.
		// The git rule is not a glob: a list replaced keeps it.
		{name: "protected replaced: .git/config still protected", setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = []string{"secret/**"} },
			path: ".git/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git"},
		{name: "protected replaced: .git/index writable", setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = []string{"secret/**"} },
			path: ".git/index", root: "ws", rel: ".git/index"},
		{name: "protected whole again by a trusted glob", setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = []string{"**/.git/**"} },
			path: ".git/index", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.git/**"},
		{name: "protected replaced: new glob", setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = []string{"secret/**"} },
			path: "secret/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "secret/**"},
		{name: "protected emptied", setup: func(_ *testing.T, _ string, p *policy.Policy) { p.Protected = nil },
			path: ".vscode/settings.json", root: "ws", rel: ".vscode/settings.json"},
		{name: "protected extra", setup: func(_ *testing.T, _ string, p *policy.Policy) {
			p.Protected = append(append([]string{}, policy.DefaultProtected...), "*.lock", "**/.env")
		}, path: "go.lock", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "*.lock"},
		{name: "protected extra, deep", setup: func(_ *testing.T, _ string, p *policy.Policy) {
			p.Protected = append(append([]string{}, policy.DefaultProtected...), "*.lock", "**/.env")
		}, path: "svc/.env", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "**/.env"},
		{name: "protected extra keeps the defaults", setup: func(_ *testing.T, _ string, p *policy.Policy) {
			p.Protected = append(append([]string{}, policy.DefaultProtected...), "*.lock")
		}, path: ".git/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/.git"},
		{name: "protected extra, top only", setup: func(_ *testing.T, _ string, p *policy.Policy) {
			p.Protected = append(append([]string{}, policy.DefaultProtected...), "*.lock")
		}, path: "d/go.lock", root: "ws", rel: "d/go.lock"},

		// Several roots.
		{name: "nested root is innermost", setup: roots("sub"), path: "sub/x", root: "ws/sub", rel: "x"},
		{name: "nested roots, listed outer first", setup: roots("a", "a/b"), path: "a/b/c", root: "ws/a/b", rel: "c"},
		{name: "nested roots, listed inner first", setup: roots("a/b", "a"), path: "a/b/c", root: "ws/a/b", rel: "c"},
		{name: "nested root, outer part", setup: roots("a/b"), path: "a/x", root: "ws", rel: "a/x"},
		{name: "nested root protected in it", setup: roots("sub"), path: "sub/.vscode/x", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: ".vscode/**"},
		{name: "nested root protected in the outer", setup: roots("sub"), path: "sub/.git/config", reason: policy.ReasonProtected, needed: policy.DangerFullAccess, matched: "$ROOT/ws/sub/.git"},
		{name: "second root", layout: []string{"other/"}, setup: roots("$ROOT/other"), path: "$ROOT/other/x", root: "other", rel: "x"},
		{name: "second root through a symlink", layout: []string{"other/", "alias => other"}, setup: roots("$ROOT/alias"), path: "$ROOT/other/x", root: "other", rel: "x"},
		{name: "second root prefix sibling", layout: []string{"other/", "other2/"}, setup: roots("$ROOT/other"), path: "$ROOT/other2/x", reason: policy.ReasonOutsideRoots, needed: policy.DangerFullAccess},
		{name: "missing root", setup: roots("$ROOT/later"), path: "$ROOT/later/x", root: "later", rel: "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, tc.layout...)
			mode := tc.mode
			if mode == "" {
				mode = policy.WorkspaceWrite
			}
			p := testPolicy(root, mode)
			if tc.setup != nil {
				tc.setup(t, root, &p)
			}
			fence := NewFence(p)
			path := expandRoot(tc.path, root)
			target, err := fence.Resolve(path)
			if tc.reason == reasonNotDir {
				// A file used as a folder fails to resolve at all.
				if fserr.CodeOf(err) != fserr.NotDir {
					t.Fatalf("Resolve(%q) = %+v, %v; want FS_NOT_DIR", path, target, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", path, err)
			}
			checkCanonShape(t, target.Path)
			v := fence.WriteVerdict(target)
			ok, why := v.Reason == "", v.Reason
			if target.root != "" || target.rel != "" {
				t.Errorf("WriteVerdict filled in the caller's target: %+v", target)
			}
			err = fence.CheckWrite("write", &target)
			if ok != (err == nil) || (!ok && why != tc.reason) {
				t.Errorf("Writable = %v, %q; CheckWrite = %v", ok, why, err)
			}
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("CheckWrite(%q) [canonical %s]: %v", path, target.Path, err)
				}
				wantRoot := ""
				if tc.root != "" {
					wantRoot = filepath.Join(root, tc.root)
				}
				if target.root != wantRoot || target.rel != tc.rel {
					t.Errorf("CheckWrite(%q): Root, Rel = %q, %q; want %q, %q", path, target.root, target.rel, wantRoot, tc.rel)
				}
				if wantRoot != "" && filepath.Join(target.root, target.rel) != target.Path {
					t.Errorf("Root/Rel %s/%s is not the canonical %s", target.root, target.rel, target.Path)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckWrite(%q) [canonical %s] passed with Root %q, want %q", path, target.Path, target.root, tc.reason)
			}
			de := deniedAs(t, err)
			if de.Reason != tc.reason || de.Needed != tc.needed {
				t.Errorf("CheckWrite(%q): reason %q needed %q; want %q, %q (%v)", path, de.Reason, de.Needed, tc.reason, tc.needed, err)
			}
			if want := expandRoot(tc.matched, root); de.Matched != want {
				t.Errorf("CheckWrite(%q): matched %q, want %q", path, de.Matched, want)
			}
			if de.Op != "write" || de.Path != path || de.Mode != mode || de.Refusal != "" {
				t.Errorf("DeniedError = %+v", de)
			}
			if len(de.WritableRoots) == 0 || de.WritableRoots[0] != filepath.Join(root, "ws") {
				t.Errorf("DeniedError.WritableRoots = %q, want the workspace first", de.WritableRoots)
			}
		})
	}
}

// reasonNotDir marks a case whose path does not resolve at all
// (FS_NOT_DIR), so there is nothing to fence.
const reasonNotDir = "test: not a folder"

// TestCheckWriteDeniedLeavesNoRoot: Target.root is "" unless CheckWrite
// passed. With nested roots the outer root matches first and fills in
// Root; the inner root then denies.
func TestCheckWriteDeniedLeavesNoRoot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string
		path   string
		reason string
	}{
		{"bare triple in the inner root", []string{"ws/inner/HEAD", "ws/inner/refs/"}, "inner/objects/x", policy.ReasonBareRepo},
		{"protected in the inner root", nil, "inner/.vscode/x", policy.ReasonProtected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, tc.layout...)
			p := testPolicy(root, policy.WorkspaceWrite)
			p.WritableRoots = []string{"inner"}
			fence := NewFence(p)
			target, err := fence.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			err = fence.CheckWrite("write", &target)
			if de := deniedAs(t, err); de.Reason != tc.reason {
				t.Fatalf("reason %q, want %q", de.Reason, tc.reason)
			}
			if target.root != "" || target.rel != "" {
				t.Errorf("denied target has Root, Rel = %q, %q; want them empty", target.root, target.rel)
			}
		})
	}
}

func TestCheckRead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layout   []string
		denyRead []string // "$ROOT" expanded
		home     string   // the user database's home, relative to the temp root
		mode     policy.Mode
		path     string
		denied   string // the matched glob; "" when the read passes
		lexical  bool   // denied only as written: ReadDenied(canonical) is false
		skip     string
	}{
		{name: "no list", path: "../out/x"},
		{name: "no list, read-only", mode: policy.ReadOnly, path: "f"},
		{name: "relative glob at the top", denyRead: []string{"secrets/**"}, path: "secrets/k", denied: "**/secrets/**"},
		{name: "relative glob, the folder", denyRead: []string{"secrets/**"}, path: "secrets", denied: "**/secrets/**"},
		{name: "relative glob deep", denyRead: []string{"secrets/**"}, path: "a/b/secrets/k", denied: "**/secrets/**"},
		{name: "relative glob outside the workspace", denyRead: []string{"secrets/**"}, path: "$ROOT/out/secrets/k", denied: "**/secrets/**"},
		{name: "relative glob, prefix name", denyRead: []string{"secrets/**"}, path: "secretsx/k"},
		{name: "relative file glob", denyRead: []string{".env"}, path: "svc/.env", denied: "**/.env"},
		{name: "relative file glob, other name", denyRead: []string{".env"}, path: "svc/.env.example"},
		{name: "denied in read-only mode", mode: policy.ReadOnly, denyRead: []string{"secrets/**"}, path: "secrets/k", denied: "**/secrets/**"},
		{name: "denied in danger mode", mode: policy.DangerFullAccess, denyRead: []string{"secrets/**"}, path: "secrets/k", denied: "**/secrets/**"},
		{name: "home glob", denyRead: []string{"~/.ssh/**"}, home: "home", path: "$ROOT/home/.ssh/id_rsa", denied: "$ROOT/home/.ssh/**"},
		{name: "home glob, other folder", denyRead: []string{"~/.ssh/**"}, home: "home", path: "$ROOT/home/.sshx/id"},
		{name: "home glob, relative path", denyRead: []string{"~/.ssh/**"}, home: "home", path: "../home/.ssh/id", denied: "$ROOT/home/.ssh/**"},
		{name: "tilde alone", denyRead: []string{"~"}, home: "home", path: "$ROOT/home", denied: "$ROOT/home"},
		{name: "absolute glob", denyRead: []string{"$ROOT/out/**"}, path: "../out/x", denied: "$ROOT/out/**"},
		{name: "symlink into a denied folder", layout: []string{"ws/s => secrets", "ws/secrets/k"}, denyRead: []string{"secrets/**"},
			path: "s/k", denied: "**/secrets/**"},
		{name: "symlink into the home glob", layout: []string{"home/.ssh/id_rsa", "ws/keys => ../home/.ssh"}, denyRead: []string{"~/.ssh/**"}, home: "home",
			path: "keys/id_rsa", denied: "$ROOT/home/.ssh/**"},
		{name: "symlink to a denied file", layout: []string{"home/.ssh/id_rsa", "ws/k => $ROOT/home/.ssh/id_rsa"}, denyRead: []string{"~/.ssh/**"}, home: "home",
			path: "k", denied: "$ROOT/home/.ssh/**"},
		{name: "symlinked denied folder", layout: []string{"vault/k", "ws/secrets => ../vault"}, denyRead: []string{"secrets/**"},
			path: "secrets/k", denied: "**/secrets/**", lexical: true},
		{
			name: "HOME is a symlink", layout: []string{"home/.ssh/id_rsa", "homelink => home"}, denyRead: []string{"~/.ssh/**"}, home: "homelink",
			path: "$ROOT/home/.ssh/id_rsa", denied: "$ROOT/homelink/.ssh/**",
		},
		{
			name:   "symlink to a symlinked denied folder",
			layout: []string{"dotfiles/ssh/id_rsa", "home/.ssh => ../dotfiles/ssh", "ws/keys => ../home/.ssh"}, denyRead: []string{"~/.ssh/**"}, home: "home",
			path: "keys/id_rsa", denied: "$ROOT/home/.ssh/**",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			root := tempRoot(t)
			makeLayout(t, root, fenceLayout...)
			makeLayout(t, root, tc.layout...)
			// $HOME is the session's to set: it must change nothing.
			t.Setenv("HOME", "/nonexistent")
			mode := tc.mode
			if mode == "" {
				mode = policy.WorkspaceWrite
			}
			p := testPolicy(root, mode)
			if tc.home != "" {
				makeLayout(t, root, "home/")
				p.Home = filepath.Join(root, tc.home)
			}
			for _, g := range tc.denyRead {
				p.DenyRead = append(p.DenyRead, expandRoot(g, root))
			}
			fence := NewFence(p)
			path := expandRoot(tc.path, root)
			target, err := fence.Resolve(path)
			if err != nil {
				t.Fatal(err)
			}
			err = fence.CheckRead("read", target)
			if got := fence.ReadDenied(target.Path); got != (tc.denied != "" && !tc.lexical) {
				t.Errorf("ReadDenied(%q) = %v", target.Path, got)
			}
			if tc.denied == "" {
				if err != nil {
					t.Fatalf("CheckRead(%q): %v", path, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckRead(%q) [canonical %s] passed, want denied by %s", path, target.Path, expandRoot(tc.denied, root))
			}
			de := deniedAs(t, err)
			if de.Reason != policy.ReasonDenyRead || de.Matched != expandRoot(tc.denied, root) || de.Needed != "" || de.Mode != mode {
				t.Errorf("CheckRead(%q) = %+v", path, de)
			}
			if de.Hint() != "" {
				t.Errorf("deny_read Hint() = %q, want none: no mode reads it", de.Hint())
			}
		})
	}
}
