package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

func TestWritableRoots(t *testing.T) {
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		t.Skipf("no /tmp here: %v", err)
	}
	for _, tc := range []struct {
		name   string
		layout []string
		tmpdir string // TMPDIR: "" unset, else relative to the temp root
		tmp    bool
		roots  []string
		want   []string // "$ROOT" the temp root, "$TMP" the canonical /tmp
		code   fserr.Code
	}{
		{name: "cwd only", want: []string{"$ROOT/ws cwd"}},
		{name: "cwd first, then tmp once when os.TempDir is /tmp", tmp: true,
			want: []string{"$ROOT/ws cwd", "$TMP tmp"}},
		{name: "tmp and a distinct os.TempDir", tmp: true, tmpdir: "t",
			want: []string{"$ROOT/ws cwd", "$TMP tmp", "$ROOT/t tmp"}},
		{name: "os.TempDir through a symlink to /tmp is listed once", tmp: true, tmpdir: "tlink",
			layout: []string{"tlink => /tmp"},
			want:   []string{"$ROOT/ws cwd", "$TMP tmp"}},
		{name: "relative root against cwd", roots: []string{"build", "../sib"},
			want: []string{"$ROOT/ws cwd", "$ROOT/ws/build writable_roots", "$ROOT/sib writable_roots"}},
		{name: "symlinked root canonicalized", layout: []string{"ws/lnk => ../real", "real/"}, roots: []string{"lnk"},
			want: []string{"$ROOT/ws cwd", "$ROOT/real writable_roots"}},
		{name: "absolute symlinked root canonicalized", layout: []string{"alias => $ROOT/real", "real/"}, roots: []string{"$ROOT/alias"},
			want: []string{"$ROOT/ws cwd", "$ROOT/real writable_roots"}},
		{name: "duplicates listed once", layout: []string{"real/", "alias => real"},
			roots: []string{".", "$ROOT/ws/", "../real", "$ROOT/alias", "../ws/./"},
			want:  []string{"$ROOT/ws cwd", "$ROOT/real writable_roots"}},
		{name: "a root equal to a temp root is listed once", tmp: true, roots: []string{"/tmp"},
			want: []string{"$ROOT/ws cwd", "$TMP tmp"}},
		{name: "missing root stays", roots: []string{"not/yet"},
			want: []string{"$ROOT/ws cwd", "$ROOT/ws/not/yet writable_roots"}},
		{name: "bad root is an error", roots: []string{"a\x00b"}, code: fserr.InvalidArgument},
		{name: "empty root is an error", roots: []string{""}, code: fserr.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			makeLayout(t, root, "ws/")
			makeLayout(t, root, tc.layout...)
			if tc.tmpdir != "" {
				makeLayout(t, root, "t/")
				t.Setenv("TMPDIR", filepath.Join(root, tc.tmpdir))
			} else {
				t.Setenv("TMPDIR", "")
			}
			expand := strings.NewReplacer("$ROOT", root, "$TMP", tmp).Replace
			p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: filepath.Join(root, "ws"), Tmp: tc.tmp}
			for _, r := range tc.roots {
				p.WritableRoots = append(p.WritableRoots, expand(r))
			}
			roots, err := WritableRoots(p)
			if tc.code != "" {
				if c := fserr.CodeOf(err); c != tc.code {
					t.Fatalf("WritableRoots = %v, %v; want code %s", roots, err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range roots {
				got = append(got, r.Path+" "+r.Origin)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, expand(w))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("WritableRoots:\n got %q\nwant %q", got, want)
			}
			if paths := RootPaths(roots); len(paths) != len(roots) || paths[0] != roots[0].Path {
				t.Errorf("RootPaths = %q", paths)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		root, target string
		rel          string
		ok           bool
	}{
		{"/ws", "/ws", ".", true},
		{"/ws", "/ws/a", "a", true},
		{"/ws", "/ws/a/b", "a/b", true},
		{"/ws", "/ws_evil", "", false},
		{"/ws", "/ws_evil/a", "", false},
		{"/ws", "/wsx", "", false},
		{"/ws", "/w", "", false},
		{"/ws", "/", "", false},
		{"/ws", "/other/ws", "", false},
		{"/ws/a", "/ws", "", false},
		{"/", "/", ".", true},
		{"/", "/a", "a", true},
		{"/", "/a/b", "a/b", true},
		{"/a/b", "/a/b/c/d", "c/d", true},
		{"/a/b", "/a/bc/d", "", false},
	} {
		rel, ok := pathmatch.Within(tc.root, tc.target)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("within(%q, %q) = %q, %v; want %q, %v", tc.root, tc.target, rel, ok, tc.rel, tc.ok)
		}
	}
}

func TestSameFileAncestor(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "ws/d/", "ws_evil/", "out/")
	ws := filepath.Join(root, "ws")
	fi, err := os.Stat(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string // relative to the temp root
		rel    string
		ok     bool
	}{
		{"ws", ".", true},
		{"ws/d", "d", true},
		{"ws/d/missing/deeper", "d/missing/deeper", true},
		{"ws_evil", "", false},
		{"ws_evil/x", "", false},
		{"out/ws", "", false},
		{".", "", false},
	} {
		rel, ok := sameFileAncestor(fi, filepath.Join(root, tc.target))
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("sameFileAncestor(ws, %q) = %q, %v; want %q, %v", tc.target, rel, ok, tc.rel, tc.ok)
		}
	}
}

// TestSessionWorkspace: the session's cwd is a writable root only when the
// trusted policy allows it as a workspace (docs/design.md §2).
func TestSessionWorkspace(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "ws/sub/", "home/proj/", "other/")
	for _, tc := range []struct {
		name       string
		cwd        string
		home       string
		workspaces []string
		trusted    bool
		refusal    string
	}{
		{name: "a project folder", cwd: "$ROOT/ws"},
		{name: "/", cwd: "/", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "/etc", cwd: "/etc", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "beneath /usr", cwd: "/usr/lib", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "/lib64 by glob", cwd: "/lib64", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "/var itself", cwd: "/var", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "a site beneath /var", cwd: "/var/tmp"},
		{name: "the home folder itself", cwd: "$ROOT/home", home: "$ROOT/home", refusal: policy.ReasonWorkspaceTooBroad},
		{name: "a project in the home folder", cwd: "$ROOT/home/proj", home: "$ROOT/home"},
		{name: "/ pinned by a trusted source", cwd: "/", trusted: true},
		{name: "the home named exactly by workspaces", cwd: "$ROOT/home", home: "$ROOT/home", workspaces: []string{"~"}},
		{name: "inside a workspaces folder", cwd: "$ROOT/ws/sub", workspaces: []string{"$ROOT/ws"}},
		{name: "matching a workspaces glob", cwd: "$ROOT/ws", workspaces: []string{"$ROOT/w*"}},
		{name: "outside workspaces", cwd: "$ROOT/other", workspaces: []string{"$ROOT/ws"}, refusal: policy.ReasonOutsideWorkspaces},
		{name: "a parent of a workspace", cwd: "$ROOT", workspaces: []string{"$ROOT/ws"}, refusal: policy.ReasonOutsideWorkspaces},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: expandRoot(tc.cwd, root), Home: expandRoot(tc.home, root),
				CwdTrusted: tc.trusted, CwdSource: "working directory " + tc.cwd}
			for _, w := range tc.workspaces {
				p.Workspaces = append(p.Workspaces, expandRoot(w, root))
			}
			roots, refused, err := deriveRoots(p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refusal == "" {
				if len(refused) != 0 || len(roots) != 1 || roots[0].Path != p.Cwd {
					t.Errorf("roots %v, refused %v; want the cwd a root", roots, refused)
				}
				return
			}
			if len(roots) != 0 || len(refused) != 1 || refused[0].Reason != tc.refusal || refused[0].Matched != p.CwdSource {
				t.Errorf("roots %v, refused %v; want the cwd refused: %s", roots, refused, tc.refusal)
			}
			// A write beneath it says why, naming the cwd's source.
			f := NewFence(p)
			target := Target{Given: "x", Path: filepath.Join(p.Cwd, "x")}
			de := deniedAs(t, f.CheckWrite("write", &target))
			if de.Reason != tc.refusal || de.Matched != p.CwdSource {
				t.Errorf("denial %q (%s), want %q (%s)", de.Reason, de.Matched, tc.refusal, p.CwdSource)
			}
			if v := f.WriteVerdict(target); v.Reason != tc.refusal {
				t.Errorf("WriteVerdict = %q; want %q", v.Reason, tc.refusal)
			}
		})
	}
}

// TestTmpdirOutsideAllowedRoots: $TMPDIR, which the session sets, is a
// writable root only beneath /tmp, a configured root or allow_roots.
func TestTmpdirOutsideAllowedRoots(t *testing.T) {
	root := tempRoot(t)
	makeLayout(t, root, "ws/", "allowed/t/", "elsewhere/")
	base := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: filepath.Join(root, "ws"), Tmp: true}
	for _, tc := range []struct {
		tmpdir string
		allow  []string
		want   bool
	}{
		{"/", nil, false},
		{"/etc", nil, false},
		{"/tmp", nil, true},
		{"$ROOT/allowed/t", nil, strings.HasPrefix(root, "/tmp/")},
		{"$ROOT/allowed/t", []string{"$ROOT/allowed"}, true},
	} {
		t.Setenv("TMPDIR", expandRoot(tc.tmpdir, root))
		p := base
		for _, a := range tc.allow {
			p.AllowRoots = append(p.AllowRoots, expandRoot(a, root))
		}
		roots, refused, err := deriveRoots(p)
		if err != nil {
			t.Fatal(err)
		}
		tmpdir, _ := Canonical("/", expandRoot(tc.tmpdir, root))
		got := slicesContains(RootPaths(roots), tmpdir)
		if got != tc.want {
			t.Errorf("TMPDIR=%s allow %v: a root = %v, want %v (refused %v)", tc.tmpdir, tc.allow, got, tc.want, refused)
		}
		if !got && (len(refused) != 1 || refused[0].Reason != policy.ReasonTmpdirNotAllowed) {
			t.Errorf("TMPDIR=%s: refused %v, want it listed", tc.tmpdir, refused)
		}
	}
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// The roots an MCP client offers narrow the writable set to what lies
// within them and never widen it.
func TestWithinClientNarrows(t *testing.T) {
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	base := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, CwdTrusted: true}
	for _, tc := range []struct {
		name   string
		within []string
		want   []string
	}{
		{"none offered", nil, []string{ws}},
		{"a folder inside", []string{sub}, []string{sub}},
		{"a folder above", []string{"/"}, []string{ws}},
		{"elsewhere only", []string{"/etc"}, nil},
		{"an empty list", []string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.Within = tc.within
			roots, err := WritableRoots(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := RootPaths(roots); !slices.Equal(got, tc.want) {
				t.Errorf("roots %v, want %v", got, tc.want)
			}
			refused, _ := RefusedRoots(p)
			outside := len(refused) > 0 && refused[0].Reason == policy.ReasonOutsideClientRoots
			if wantRefused := !slices.Contains(tc.want, ws); outside != wantRefused {
				t.Errorf("refused %+v: want the workspace refused = %v", refused, wantRefused)
			}
		})
	}
}

// TestWindowsTooBroad: on Windows a drive's root, the users' folder and
// the machine's data are never a workspace, and the system's trees hold
// none (the fence's spelling, /C:/…; run here as values). With the Unix
// lists, which the Windows build used before, a session at C:\ wrote
// anywhere on the drive (write_cwd_root_too_broad under Wine: exit 0).
func TestWindowsTooBroad(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{"/", true}, {"/C:", true}, {"/d:", true}, {"/C:/Users", true}, {"/C:/ProgramData", true},
		{"/C:/Windows", true}, {"/C:/Windows/System32", true}, {"/C:/Program Files/Tool", true},
		{"/C:/Users/me/proj", false}, {"/C:/proj", false}, {"/D:/work/site", false},
	} {
		if got := windowsTooBroad.covers(tc.dir, "/C:/Users/me"); got != tc.want {
			t.Errorf("%s: too broad = %t, want %t", tc.dir, got, tc.want)
		}
	}
	if !windowsTooBroad.covers("/C:/Users/me", "/C:/Users/me") {
		t.Errorf("the home folder is too broad")
	}
	unix := broadLists{trees: tooBroadTrees, exact: tooBroadExact}
	if unix.covers("/C:", "") {
		t.Errorf("the Unix lists know no drive: this test's rows are Windows' own")
	}
}

// TestWalksUpEnd: every walk up the folders ends, whatever spelling it
// starts from. Under Wine `dsh-fs policy`, `--writable-root ..` and
// `--writable-root sub` looped forever: the root derivations were handed
// the policy as Windows spells it (`C:\ws`), whose path.Dir is "." and
// then "." again, and the walks stopped only at "/".
func TestWalksUpEnd(t *testing.T) {
	for _, dir := range []string{`C:\w\ws`, "ws", ".", "", "/C:/w/ws", "/C:", "/"} {
		var got []string
		for d := range ancestors(dir) {
			got = append(got, d)
			if len(got) > 8 {
				t.Fatalf("ancestors(%q) does not end: %q", dir, got)
			}
		}
		windowsTooBroad.covers(dir, "")
		unix := broadLists{trees: tooBroadTrees, exact: tooBroadExact}
		unix.covers(dir, "")
		sameFileAncestor(nil, dir)
		workspaceRefusal(policy.Policy{Cwd: dir, Workspaces: []string{"/nowhere"}})
	}
	if got := slices.Collect(ancestors("/C:/w/ws")); !slices.Equal(got, []string{"/C:/w/ws", "/C:/w", "/C:", "/"}) {
		t.Errorf("ancestors of /C:/w/ws = %q", got)
	}
}
