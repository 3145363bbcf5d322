package layout

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// makeTree builds a layout under dir in os.Root's notation: "d/" a folder,
// "f" a file (its content its name), "a => t" a symlink to t.
func makeTree(t *testing.T, dir string, layout ...string) {
	t.Helper()
	for _, e := range layout {
		path := filepath.Join(dir, e)
		var err error
		switch name, target, link := strings.Cut(e, " => "); {
		case link:
			path = filepath.Join(dir, name)
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(target, path)
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(path, 0o755)
		default:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.WriteFile(path, []byte(e), 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// canonTemp is a canonical t.TempDir().
func canonTemp(t *testing.T) string {
	t.Helper()
	d, err := sandbox.Canonical("/", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mountsTree is the shared layout of the mount tests: a workspace "ws"
// with protected paths, a git directory by content only, a .git symlink
// pointing out, deny_read files, and a secret folder outside it.
var mountsTree = []string{
	"ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/", "ws/.git/config", "ws/.git/hooks/inner/",
	"ws/sub/.git/HEAD", "ws/sub/code.go",
	"ws/.vscode/settings.json",
	"ws/.mcp.json",
	"ws/src/.bashrc", "ws/src/main.go",
	"ws/other/.git => ../../outside",
	"ws/vendor/lib.git/HEAD", "ws/vendor/lib.git/objects/", "ws/vendor/lib.git/refs/",
	"ws/.env", "ws/app/.env", "ws/app/env.go",
	"ws/dsh-fs.yaml",
	"outside/HEAD",
	"secret/key",
	"keys/a.pem", "keys/b.txt",
}

func TestMountPlan(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, mountsTree...)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{
		Mode:         policy.WorkspaceWrite,
		Cwd:          ws,
		Protected:    policy.DefaultProtected,
		DenyRead:     []string{".env", tmp + "/secret/**", tmp + "/keys/*.pem", tmp + "/missing/**"},
		ConfigFiles:  []string{filepath.Join(ws, "dsh-fs.yaml")},
		TrustedFiles: []string{filepath.Join(tmp, "outside", "HEAD"), filepath.Join(ws, "absent.yaml")},
	}
	in := func(names ...string) []string {
		out := []string{}
		for _, n := range names {
			out = append(out, filepath.Join(tmp, n))
		}
		return out
	}
	tests := []struct {
		name   string
		origin string
		budget int
		want   MountPlan
	}{
		{
			name: "workspace", origin: "cwd",
			want: MountPlan{Files: plan.Files{
				// ws/other/.git is a symlink: skipped, and outside/ is not
				// walked. dsh-fs.yaml is a loaded config file in the root;
				// outside/HEAD is trusted but outside every root.
				// Of a git directory only its code-running parts that
				// exist (ws/.git's config and hooks; ws/sub/.git and
				// vendor/lib.git hold none).
				// The protected paths missing at the start get a
				// placeholder (placeholders.go): .codex and its like, and
				// in the root's .git, config.worktree, and info and
				// objects/info, the first missing folders of the others.
				ReadOnly: in("ws/.agents", "ws/.claude", "ws/.codex", "ws/.dsh-fs", "ws/.git/config", "ws/.git/config.worktree",
					"ws/.git/hooks", "ws/.git/info", "ws/.git/objects/info", "ws/.idea", "ws/.mcp.json", "ws/.vscode", "ws/dsh-fs.yaml", "ws/src/.bashrc"),
				Hidden:      in("secret"),
				HiddenFiles: in("keys/a.pem", "ws/.env", "ws/app/.env"),
				// The folders between the root (rebound by the read-only
				// tree) and each read-only path, and each git directory
				// (by content or by its name .git) with the folders
				// above it.
				Pinned:   in("ws/.git", "ws/.git/objects", "ws/src", "ws/sub", "ws/sub/.git", "ws/vendor", "ws/vendor/lib.git"),
				Writable: in("ws"),
			}},
		},
		{
			name: "tmp root not walked", origin: "tmp",
			want: MountPlan{Files: plan.Files{
				ReadOnly:    in("ws/dsh-fs.yaml"),
				Hidden:      in("secret"),
				HiddenFiles: in("keys/a.pem"),
				Pinned:      []string{},
				Writable:    in("ws"),
			}},
		},
	}
	// A root is read whole whatever the walk budget: no budget of a walk
	// decides what a root's plan protects.
	noBudget := tests[0]
	noBudget.name, noBudget.origin, noBudget.budget = "no budget for a root", "writable_roots", 5
	tests = append(tests, noBudget)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			if tc.budget > 0 {
				o.walkBudget = tc.budget
			}
			got := o.planIndexed(p, []sandbox.Root{{Path: ws, Origin: tc.origin}}, nil)
			if !equalPlans(got, tc.want) {
				t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(tc.want))
			}
		})
	}
}

func TestMountPlanCovers(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp,
		"ws/secrets/a", "ws/secrets/deep/secrets/b",
		"ws/.vscode/tasks.json",
		"ws/.git/HEAD", "ws/.git/objects/", "ws/.git/refs/",
		"ws/.git/hooks/secrets/x",
	)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"secrets", "**/.vscode/**"}}
	got := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{Files: plan.Files{
		// Hiding wins over protection (.vscode), a hidden folder covers
		// what lies beneath it (deep/secrets), and a read-only folder is
		// not walked into (.git/hooks/secrets): of .git, its hooks.
		ReadOnly:    []string{ws + "/.git/hooks"},
		Hidden:      []string{ws + "/.vscode", ws + "/secrets"},
		HiddenFiles: []string{},
	}}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
	if j := planJSON(planMounts(policy.Policy{Cwd: ws}, nil)); j != `{"read_only":[],"hidden":[],"hidden_files":[],"hidden_sockets":[],"outside_read_only":true,"writable":[],"pinned":[]}` {
		t.Errorf("empty plan = %s", j)
	}
}

func TestMountPlanAbsoluteGlob(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp, "keys/a/id_rsa", "keys/a/deep/id_rsa", "keys/a/id_rsa.pub", "keys/b/id_ed25519/x",
		"home => keys")
	// The glob is spelled through a symlink: matched on the canonical
	// spelling, planned once.
	p := policy.Policy{Cwd: tmp, DenyRead: []string{tmp + "/home/*/id_*", tmp + "/keys/*/id_*"}}
	tests := []struct {
		name   string
		budget int
		want   MountPlan
	}{
		{name: "walked", want: MountPlan{Files: plan.Files{
			// "*" crosses no "/": a/deep/id_rsa is not covered.
			ReadOnly: []string{}, Hidden: []string{tmp + "/keys/b/id_ed25519"},
			HiddenFiles: []string{tmp + "/keys/a/id_rsa", tmp + "/keys/a/id_rsa.pub"},
		}}},
		{name: "budget", budget: 3, want: MountPlan{
			// keys holds 2 entries and a 3: the walk stops there.
			Files:   plan.Files{ReadOnly: []string{}, Hidden: []string{}, HiddenFiles: []string{}},
			Partial: []string{tmp + "/keys"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			if tc.budget > 0 {
				o.walkBudget = tc.budget
			}
			if got := o.planIndexed(p, nil, nil); !equalPlans(got, tc.want) {
				t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(tc.want))
			}
		})
	}
}

// TestMountPlanConfig pins that a deny_read glob, which a session may
// add, never hides a config file or a folder holding one from the dsh-fs
// the shell runs, nor stops the walk there: what else it covers is still
// hidden entry by entry (ws/conf/.git, protected too: hiding wins).
func TestMountPlanConfig(t *testing.T) {
	tmp := canonTemp(t)
	makeTree(t, tmp,
		"ws/.git/HEAD", "ws/conf/dsh-fs.yaml", "ws/conf/key", "ws/conf/.git/HEAD",
		"etc/dsh-fs/config.yaml", "etc/dsh-fs/other.yaml", "etc/passwd", "etc/ssl/cert",
	)
	ws := filepath.Join(tmp, "ws")
	p := policy.Policy{Cwd: ws, Protected: policy.DefaultProtected,
		DenyRead:     []string{ws, tmp + "/etc/**"},
		ConfigFiles:  []string{ws + "/conf/dsh-fs.yaml"},
		TrustedFiles: []string{tmp + "/etc/dsh-fs/config.yaml"},
	}
	got := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	want := MountPlan{Files: plan.Files{
		ReadOnly:    []string{ws + "/conf/dsh-fs.yaml"},
		Hidden:      []string{tmp + "/etc/ssl", ws + "/.git", ws + "/conf/.git"},
		HiddenFiles: []string{tmp + "/etc/dsh-fs/other.yaml", tmp + "/etc/passwd", ws + "/conf/key"},
	}}
	if !equalPlans(got, want) {
		t.Errorf("PlanMounts:\n got %s\nwant %s", planJSON(got), planJSON(want))
	}
}

// TestMountWalkGlobCovers pins walkGlob.covers, pathmatch.Covers with a literal
// prefilter, to pathmatch.Covers itself: the walk and the fence must agree.
func TestMountWalkGlobCovers(t *testing.T) {
	globs := append([]string{"**/.env", "secrets", "/h/u/.ssh/**", "a/*/c", "**/x[ab]/**", `\*lit`, "[", ".", "**"}, policy.DefaultProtected...)
	names := []string{".", "a", ".git", "sub/.git", "sub/.git/hooks/pre-commit", ".gitx", "x/.vscode", ".vscode/s.json",
		"/h/u/.ssh", "/h/u/.ssh/id", "/h/u/.sshx", "a/b/c", "a/b/c/d", "a/c", "p/xa/q", "xc", "*lit", "slit", ".bashrc",
		"d/.bashrc", "secrets/k", "deep/secrets", "/w/.env", ".env.local"}
	for _, g := range globs {
		w := newWalkGlob(g)
		for _, n := range names {
			if got, want := w.covers(pathmatch.Components(n)), pathmatch.Covers(g, n); got != want {
				t.Errorf("walkGlob(%q).covers(%q) = %v, matchCovers says %v", g, n, got, want)
			}
		}
	}
}

// equalPlans compares the paths of two plans; a nil Pinned or Writable
// in b is not compared.
func equalPlans(a, b MountPlan) bool {
	return slices.Equal(a.ReadOnly, b.ReadOnly) && slices.Equal(a.Hidden, b.Hidden) &&
		slices.Equal(a.HiddenFiles, b.HiddenFiles) && slices.Equal(a.Partial, b.Partial) &&
		(b.Pinned == nil || slices.Equal(a.Pinned, b.Pinned)) && (b.Writable == nil || slices.Equal(a.Writable, b.Writable)) &&
		slices.Equal(a.Unpinned, b.Unpinned) && slices.Equal(a.Unreadable, b.Unreadable)
}

func planJSON(m MountPlan) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func TestMountLayer(t *testing.T) {
	ok, why := MountLayer()
	if root := os.Geteuid() == 0; ok != root && why != "needs cap_sys_admin" {
		t.Errorf("MountLayer() = %v, %q as euid %d", ok, why, os.Geteuid())
	}
	if !ok && why == "" {
		t.Error("MountLayer() refused without saying why")
	}
}

// TestMountPlanPins pins planPins: every folder from the outermost root
// holding a read-only path down to its parent, the root itself only when
// the read-only tree does not rebind it, nested roots not twice, paths
// outside every root not at all, and past the budget the path unpinned.
func TestMountPlanPins(t *testing.T) {
	roots := []string{"/tmp", "/tmp/a/ws", "/w"}
	ro := []string{"/tmp/a/ws/sub/.git", "/tmp/a/ws/.git", "/w/x/y/.git", "/elsewhere/.git"}
	tests := []struct {
		name     string
		rebound  bool
		budget   int
		pinned   []string
		unpinned []string
	}{
		{name: "rebound", rebound: true, pinned: []string{"/tmp/a", "/tmp/a/ws/sub", "/w/x", "/w/x/y"}},
		{name: "not rebound", pinned: []string{"/tmp", "/tmp/a", "/tmp/a/ws", "/tmp/a/ws/sub", "/w", "/w/x", "/w/x/y"}},
		{name: "budget", rebound: true, budget: 3, pinned: []string{"/tmp/a", "/tmp/a/ws/sub"}, unpinned: []string{"/w/x/y/.git"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			budget := sessionOptions().maxPinned
			if tc.budget > 0 {
				budget = tc.budget
			}
			pinned, unpinned := planPins(ro, roots, tc.rebound, budget)
			if !slices.Equal(pinned, tc.pinned) || !slices.Equal(unpinned, tc.unpinned) {
				t.Errorf("planPins = %q, %q; want %q, %q", pinned, unpinned, tc.pinned, tc.unpinned)
			}
		})
	}
}
