package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/pkg/fserr"
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
			p := Policy{Mode: WorkspaceWrite, Cwd: filepath.Join(root, "ws"), Tmp: tc.tmp}
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
		rel, ok := within(tc.root, tc.target)
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
