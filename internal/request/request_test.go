package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/search"
)

// layout is a workspace ws (the cwd, writable), a folder beside it that
// is not, and a secret under deny_read.
//
//	ws/a.txt          "one\ntwo\nthree\n"
//	ws/src/main.go    "package main\n"
//	ws/secret.key     "k\n"   (deny_read)
//	outside/o.txt     "o\n"
type layout struct {
	root, ws, outside string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	for name, content := range map[string]string{
		"ws/a.txt":       "one\ntwo\nthree\n",
		"ws/src/main.go": "package main\n",
		"ws/secret.key":  "k\n",
		"outside/o.txt":  "o\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// exec is the Exec of a workspace-write call in ws, without the kernel
// layer (it would restrict the whole test process): the fence alone
// decides, as it does before Landlock in every call.
func (l layout) exec() *Exec {
	f := sandbox.NewFence(policy.Policy{
		Mode: policy.WorkspaceWrite, Cwd: l.ws, Enforce: policy.EnforceOff, MaxMode: policy.DangerFullAccess,
		Protected: policy.DefaultProtected, DenyRead: []string{filepath.Join(l.ws, "*.key")},
	})
	return New(f, Bounds{ReadMaxLines: 2000, ReadMaxBytes: 1 << 20, Diff: diff.Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 1 << 20}})
}

func (l layout) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(l.root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func wantCode(t *testing.T, err error, code fserr.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := fserr.CodeOf(err); got != code {
		t.Fatalf("error %v has code %s, want %s", err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRead(t *testing.T) {
	l := newLayout(t)
	res, err := Read{Path: "a.txt", Offset: 2, Limit: ptr(1)}.Run(l.exec())
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "two\n" || res.StartLine != 2 || res.TotalLines != 3 || !res.Truncated {
		t.Errorf("window %+v, want line 2 of 3", res)
	}
	// No limit takes the bounds' read_max_lines.
	x := l.exec()
	x.bounds.ReadMaxLines = 2
	if res, err = (Read{Path: "a.txt"}).Run(x); err != nil || res.Content != "one\ntwo\n" || res.NextOffset != 3 {
		t.Errorf("default window %+v, %v, want two lines and next_offset 3", res, err)
	}
	for _, tc := range []struct {
		name string
		req  Read
		code fserr.Code
	}{
		{"missing file", Read{Path: "nope.txt"}, fserr.NotFound},
		{"deny_read", Read{Path: "secret.key"}, fserr.SandboxDenied},
		{"a folder", Read{Path: "src"}, fserr.IsDir},
		{"limit 0", Read{Path: "a.txt", Limit: ptr(0)}, fserr.InvalidArgument},
		{"negative offset", Read{Path: "a.txt", Offset: -1}, fserr.InvalidArgument},
		{"NUL in the path", Read{Path: "a\x00b"}, fserr.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Run(l.exec())
			wantCode(t, err, tc.code)
		})
	}
}

func TestReadStream(t *testing.T) {
	l := newLayout(t)
	var out bytes.Buffer
	n, err := Read{Path: "src/main.go"}.Stream(l.exec(), &out)
	if err != nil || n != 13 || out.String() != "package main\n" {
		t.Errorf("stream %d bytes %q, %v", n, out.String(), err)
	}
	out.Reset()
	_, err = Read{Path: "secret.key"}.Stream(l.exec(), &out)
	wantCode(t, err, fserr.SandboxDenied)
	if out.Len() != 0 {
		t.Errorf("a denied stream wrote %q", out.String())
	}
}

func TestWrite(t *testing.T) {
	l := newLayout(t)
	res, err := Write{Path: "new/b.txt", Content: []byte("b\n"), Mkdir: true}.Run(l.exec())
	if err != nil || !res.Created || res.Bytes != 2 {
		t.Fatalf("write %+v, %v", res, err)
	}
	if got := l.read(t, "ws/new/b.txt"); got != "b\n" {
		t.Errorf("wrote %q", got)
	}
	// Source, when set, is what is written.
	if _, err := (Write{Path: "a.txt", Source: strings.NewReader("streamed\n"), Content: []byte("not this"), Overwrite: true}).Run(l.exec()); err != nil {
		t.Fatal(err)
	}
	if got := l.read(t, "ws/a.txt"); got != "streamed\n" {
		t.Errorf("wrote %q, want the source's content", got)
	}
	// A dry run changes nothing and says what it would do.
	res, err = Write{Path: "a.txt", Content: []byte("dry\n"), Overwrite: true, Mutation: Mutation{DryRun: true, Diff: "full"}}.Run(l.exec())
	if err != nil || !res.DryRun || res.Diff.Text == "" || l.read(t, "ws/a.txt") != "streamed\n" {
		t.Errorf("dry run %+v, %v, file %q", res, err, l.read(t, "ws/a.txt"))
	}
	for _, tc := range []struct {
		name string
		req  Write
		code fserr.Code
		file string // must keep its content
	}{
		{"outside the writable roots", Write{Path: "../outside/o.txt", Content: []byte("pwned"), Overwrite: true}, fserr.SandboxDenied, "outside/o.txt"},
		{"an existing file unseen", Write{Path: "a.txt", Content: []byte("x")}, fserr.Exists, "ws/a.txt"},
		{"a stale pin", Write{Path: "a.txt", Content: []byte("x"), Mutation: Mutation{IfMatch: strings.Repeat("0", 64)}}, fserr.Stale, "ws/a.txt"},
		{"a bad diff form", Write{Path: "a.txt", Content: []byte("x"), Overwrite: true, Mutation: Mutation{Diff: "some"}}, fserr.InvalidArgument, "ws/a.txt"},
		{"a bad encoding", Write{Path: "a.txt", Content: []byte("x"), Overwrite: true, Encoding: "ebcdic"}, fserr.InvalidArgument, "ws/a.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := l.read(t, tc.file)
			_, err := tc.req.Run(l.exec())
			wantCode(t, err, tc.code)
			if after := l.read(t, tc.file); after != before {
				t.Errorf("%s changed: %q, was %q", tc.file, after, before)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(l.ws, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed write left a file: %v", err)
	}
}

// A preview computes the change an approver is shown, whatever the fence
// says of the path, and writes nothing.
func TestPreview(t *testing.T) {
	l := newLayout(t)
	w, err := Write{Path: "../outside/o.txt", Content: []byte("p\n"), Overwrite: true}.Preview(l.exec())
	if err != nil {
		t.Fatal(err)
	}
	if w.Created || w.PreviousSHA256 == "" || !strings.Contains(w.Diff.Text, "+p") {
		t.Errorf("write preview %+v", w)
	}
	e, err := Edit{Path: "../outside/o.txt", Edits: []fsops.Replacement{{Old: "o", New: "q"}}}.Preview(l.exec())
	if err != nil || !strings.Contains(e.Diff.Text, "+q") {
		t.Errorf("edit preview %+v, %v", e, err)
	}
	if got := l.read(t, "outside/o.txt"); got != "o\n" {
		t.Errorf("a preview wrote %q", got)
	}
	_, err = Edit{Path: "../outside/o.txt", Edits: []fsops.Replacement{{Old: "absent", New: "q"}}}.Preview(l.exec())
	wantCode(t, err, fserr.EditNoMatch)
	_, err = Write{Path: "a\x00", Content: []byte("p")}.Preview(l.exec())
	wantCode(t, err, fserr.InvalidArgument)
}

// A patch's preview is its whole diff, in full whatever form it asks
// for, planned on the files as they are (one outside the writable roots
// included), with a pin for each file it changes that exists; it writes
// nothing, and a patch that could not apply previews nothing.
func TestPatchPreview(t *testing.T) {
	l := newLayout(t)
	p := "*** Begin Patch\n*** Update File: ../outside/o.txt\n@@\n-o\n+q\n*** Add File: new.txt\n+n\n*** End Patch\n"
	pv, err := Patch{Patch: []byte(p), DryRun: true, Diff: "summary"}.Preview(l.exec())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pv.Diff.Text, "+q") || !strings.Contains(pv.Diff.Text, "+n") {
		t.Errorf("patch preview diff %q: want both files in full", pv.Diff.Text)
	}
	shown, err := Read{Path: "../outside/o.txt"}.Run(l.exec())
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Pins) != 1 || pv.Pins["../outside/o.txt"] != shown.SHA256 {
		t.Errorf("pins %v: want the one existing file, by the patch's name for it, at %s", pv.Pins, shown.SHA256)
	}
	if got := l.read(t, "outside/o.txt"); got != "o\n" {
		t.Errorf("a preview wrote %q", got)
	}
	if _, err := os.Stat(filepath.Join(l.ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a preview created a file: %v", err)
	}
	for _, tc := range append(unplaceablePatches(),
		patchCase{"a stale pin", Patch{Patch: []byte(p), IfMatch: map[string]string{"../outside/o.txt": strings.Repeat("0", 64)}}, fserr.Stale}) {
		_, err := tc.req.Preview(l.exec())
		if fserr.CodeOf(err) != tc.code {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
		}
	}
}

func TestEdit(t *testing.T) {
	l := newLayout(t)
	res, err := Edit{Path: "a.txt", Edits: []fsops.Replacement{{Old: "two", New: "2"}, {Old: "three", New: "3"}}}.Run(l.exec())
	if err != nil || res.Replacements != 2 {
		t.Fatalf("edit %+v, %v", res, err)
	}
	if got := l.read(t, "ws/a.txt"); got != "one\n2\n3\n" {
		t.Errorf("edited to %q", got)
	}
	for _, tc := range []struct {
		name string
		req  Edit
		code fserr.Code
		file string
	}{
		{"no match", Edit{Path: "a.txt", Edits: []fsops.Replacement{{Old: "absent", New: "x"}}}, fserr.EditNoMatch, "ws/a.txt"},
		{"the second of two fails", Edit{Path: "a.txt", Edits: []fsops.Replacement{{Old: "one", New: "1"}, {Old: "absent", New: "x"}}}, fserr.EditNoMatch, "ws/a.txt"},
		{"no edits", Edit{Path: "a.txt"}, fserr.InvalidArgument, "ws/a.txt"},
		{"outside", Edit{Path: "../outside/o.txt", Edits: []fsops.Replacement{{Old: "o", New: "x"}}}, fserr.SandboxDenied, "outside/o.txt"},
		{"missing file", Edit{Path: "nope.txt", Edits: []fsops.Replacement{{Old: "o", New: "x"}}}, fserr.NotFound, "ws/a.txt"},
		{"a bad diff form", Edit{Path: "a.txt", Edits: []fsops.Replacement{{Old: "one", New: "1"}}, Mutation: Mutation{Diff: "x"}}, fserr.InvalidArgument, "ws/a.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := l.read(t, tc.file)
			_, err := tc.req.Run(l.exec())
			wantCode(t, err, tc.code)
			if after := l.read(t, tc.file); after != before {
				t.Errorf("%s changed: %q, was %q", tc.file, after, before)
			}
		})
	}
}

func TestListStat(t *testing.T) {
	l := newLayout(t)
	ls, err := List{Path: ".", Recursive: true, Limit: 100}.Run(l.exec())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ls.Entries {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "a.txt") || !strings.Contains(got, "main.go") || strings.Contains(got, "secret.key") {
		t.Errorf("listed %q: want a.txt and src/main.go, never the deny_read secret", got)
	}
	_, err = List{Path: "nope", Limit: 100}.Run(l.exec())
	wantCode(t, err, fserr.NotFound)
	_, err = List{Path: "a.txt", Limit: 100}.Run(l.exec())
	wantCode(t, err, fserr.NotDir)

	st, err := Stat{Path: "a.txt"}.Run(l.exec())
	if err != nil || st.Type != fsops.TypeFile || !st.Writable {
		t.Errorf("stat a.txt %+v, %v", st, err)
	}
	if st, err = (Stat{Path: "../outside/o.txt"}).Run(l.exec()); err != nil || st.Writable {
		t.Errorf("stat outside %+v, %v: want not writable", st, err)
	}
	if st, err = (Stat{Path: "nope"}).Run(l.exec()); err != nil || st.Exists {
		t.Errorf("stat of a missing path %+v, %v: want exists false", st, err)
	}
	_, err = Stat{Path: "secret.key\x00"}.Run(l.exec())
	wantCode(t, err, fserr.InvalidArgument)
}

func TestGrepFind(t *testing.T) {
	l := newLayout(t)
	g, err := Grep{Pattern: "package|two", Paths: []string{"src", "a.txt"}, Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 200}.Run(l.exec())
	if err != nil || g.Total != 2 {
		t.Fatalf("grep %+v, %v: want 2 matches over two paths", g, err)
	}
	// No paths is ".".
	if g, err = (Grep{Pattern: "package", Fixed: true, Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 200}).Run(l.exec()); err != nil || g.Total != 1 {
		t.Errorf("grep of . %+v, %v", g, err)
	}
	_, err = Grep{Pattern: "(", Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 200}.Run(l.exec())
	wantCode(t, err, fserr.InvalidArgument)
	_, err = Grep{Pattern: "x", Paths: []string{"src", "nope"}, Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 200}.Run(l.exec())
	wantCode(t, err, fserr.NotFound)

	f, err := Find{Glob: "**/*.go", Limit: 10, MaxBytes: 1 << 20}.Run(l.exec())
	if err != nil || f.Total != 1 || f.Entries[0].Path != "src/main.go" {
		t.Errorf("find %+v, %v", f, err)
	}
	_, err = Find{Glob: "*", Type: "socket-ish", Limit: 10, MaxBytes: 1 << 20}.Run(l.exec())
	wantCode(t, err, fserr.InvalidArgument)
	_, err = Find{Glob: "*", Path: "nope", Limit: 10, MaxBytes: 1 << 20}.Run(l.exec())
	wantCode(t, err, fserr.NotFound)
}

// patchCase is a patch request that fails with code.
type patchCase struct {
	name string
	req  Patch
	code fserr.Code
}

// unplaceablePatches fail whatever the fence says: a run and a preview
// refuse them alike.
func unplaceablePatches() []patchCase {
	return []patchCase{
		{"not a patch", Patch{Patch: []byte("hello\n")}, fserr.InvalidArgument},
		{"a hunk that does not apply", Patch{Patch: []byte("*** Begin Patch\n*** Update File: a.txt\n@@\n-absent\n+x\n*** End Patch\n")}, fserr.EditNoMatch},
	}
}

func TestPatch(t *testing.T) {
	l := newLayout(t)
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Add File: added.txt\n+added\n*** End Patch\n"
	res, err := Patch{Patch: []byte(p)}.Run(l.exec())
	if err != nil || len(res.Files) != 2 {
		t.Fatalf("patch %+v, %v", res, err)
	}
	if l.read(t, "ws/a.txt") != "one\n2\nthree\n" || l.read(t, "ws/added.txt") != "added\n" {
		t.Errorf("patched to %q and %q", l.read(t, "ws/a.txt"), l.read(t, "ws/added.txt"))
	}
	for _, tc := range append(unplaceablePatches(),
		patchCase{"a stale pin", Patch{Patch: []byte("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n"), IfMatch: map[string]string{"a.txt": strings.Repeat("0", 64)}}, fserr.Stale},
		patchCase{"outside, with a file inside", Patch{Patch: []byte("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Update File: ../outside/o.txt\n@@\n-o\n+x\n*** End Patch\n")}, fserr.SandboxDenied},
		patchCase{"a bad diff form", Patch{Patch: []byte(p), Diff: "x"}, fserr.InvalidArgument},
	) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Run(l.exec())
			wantCode(t, err, tc.code)
			if l.read(t, "ws/a.txt") != "one\n2\nthree\n" || l.read(t, "outside/o.txt") != "o\n" {
				t.Errorf("a failed patch changed a file: %q, %q", l.read(t, "ws/a.txt"), l.read(t, "outside/o.txt"))
			}
		})
	}
	if err := (Patch{Patch: []byte("hello\n")}).Check(); fserr.CodeOf(err) != fserr.InvalidArgument {
		t.Errorf("Check of a non-patch: %v", err)
	}
	if err := (Patch{Patch: []byte(p)}).Check(); err != nil {
		t.Errorf("Check of a patch: %v", err)
	}
}

func TestMkdirMove(t *testing.T) {
	l := newLayout(t)
	res, err := Mkdir{Path: "d/e", Parents: true}.Run(l.exec())
	if err != nil || !res.Created {
		t.Fatalf("mkdir %+v, %v", res, err)
	}
	if fi, err := os.Stat(filepath.Join(l.ws, "d/e")); err != nil || !fi.IsDir() {
		t.Errorf("no folder made: %v", err)
	}
	if res, err = (Mkdir{Path: "d/e"}).Run(l.exec()); err != nil || res.Created {
		t.Errorf("mkdir again %+v, %v: want no error and not created", res, err)
	}
	_, err = Mkdir{Path: "../outside/d"}.Run(l.exec())
	wantCode(t, err, fserr.SandboxDenied)
	if _, err := os.Stat(filepath.Join(l.outside, "d")); !os.IsNotExist(err) {
		t.Errorf("a denied mkdir made the folder: %v", err)
	}

	if _, err := (Move{Source: "a.txt", Destination: "d/a.txt"}).Run(l.exec()); err != nil {
		t.Fatal(err)
	}
	if l.read(t, "ws/d/a.txt") != "one\ntwo\nthree\n" {
		t.Error("moved file has other content")
	}
	for _, tc := range []struct {
		name string
		req  Move
		code fserr.Code
	}{
		{"onto an existing file", Move{Source: "src/main.go", Destination: "d/a.txt"}, fserr.Exists},
		{"a missing source", Move{Source: "nope", Destination: "d/nope"}, fserr.NotFound},
		{"out of the writable roots", Move{Source: "src/main.go", Destination: "../outside/main.go"}, fserr.SandboxDenied},
		{"from outside", Move{Source: "../outside/o.txt", Destination: "o.txt"}, fserr.SandboxDenied},
		// Found before the rename: the kernel's EINVAL would be FS_IO.
		{"a folder into itself", Move{Source: "src", Destination: "src/inner"}, fserr.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Run(l.exec())
			wantCode(t, err, tc.code)
			if l.read(t, "ws/src/main.go") != "package main\n" || l.read(t, "outside/o.txt") != "o\n" {
				t.Error("a failed move moved something")
			}
		})
	}
	// The denied target is there to escalate: ResolveName gives it back.
	x := l.exec()
	_, err = Move{Source: "src/main.go", Destination: "../outside/main.go"}.Run(x)
	var de *policy.DeniedError
	if !errorAs(err, &de) {
		t.Fatalf("move out: %v, want a denial", err)
	}
	if dst, err := x.ResolveName("../outside/main.go"); err != nil || dst.Path != filepath.Join(l.outside, "main.go") {
		t.Errorf("destination %+v, %v", dst, err)
	}
}

// A move and a removal act on the name: a symlink is moved or removed as
// a link, and what it names stays where it is. (Resolved following the
// link, as it was before issue 40, MCP's move_file renamed the file the
// link named and left the link dangling.)
func TestMoveAndRemoveActOnTheLink(t *testing.T) {
	l := newLayout(t)
	link := filepath.Join(l.ws, "link")
	if err := os.Symlink("a.txt", link); err != nil {
		t.Fatal(err)
	}
	res, err := Move{Source: "link", Destination: "src/link"}.Run(l.exec())
	if err != nil || res.Type != "symlink" {
		t.Fatalf("move: %+v, %v", res, err)
	}
	if target, err := os.Readlink(filepath.Join(l.ws, "src/link")); err != nil || target != "a.txt" {
		t.Errorf("moved link reads %q, %v", target, err)
	}
	if l.read(t, "ws/a.txt") != "one\ntwo\nthree\n" {
		t.Error("the link's target moved or changed")
	}
	if _, err := (Remove{Path: "src/link"}).Run(l.exec()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(l.ws, "src/link")); !os.IsNotExist(err) {
		t.Errorf("link still there: %v", err)
	}
	if l.read(t, "ws/a.txt") != "one\ntwo\nthree\n" {
		t.Error("removing the link touched its target")
	}
}

// Exec resolves a path once per call: the run takes the target the front
// end resolved for its header, even when a symlink changes in between;
// a new call resolves afresh, and a failure is not remembered.
func TestExecResolvesOnce(t *testing.T) {
	l := newLayout(t)
	link := filepath.Join(l.ws, "link")
	if err := os.Symlink("a.txt", link); err != nil {
		t.Fatal(err)
	}
	x := l.exec()
	first, err := x.Resolve("link")
	if err != nil || first.Path != filepath.Join(l.ws, "a.txt") {
		t.Fatalf("resolved %+v, %v", first, err)
	}
	os.Remove(link)
	if err := os.Symlink("src", link); err != nil {
		t.Fatal(err)
	}
	if again, err := x.Resolve("link"); err != nil || again != first {
		t.Errorf("resolved again %+v, %v: want %+v", again, err, first)
	}
	if _, err := (Stat{Path: "link"}).Run(x); err != nil {
		t.Fatal(err)
	}
	if len(x.resolved) != 1 {
		t.Errorf("remembered %d targets, want 1", len(x.resolved))
	}
	if fresh, err := l.exec().Resolve("link"); err != nil || fresh.Path != filepath.Join(l.ws, "src") {
		t.Errorf("a new call resolved %+v, %v", fresh, err)
	}
	if _, err := x.Resolve("a\x00"); err == nil {
		t.Fatal("NUL resolved")
	}
	if len(x.resolved) != 1 {
		t.Errorf("remembered %d targets after a failure, want 1", len(x.resolved))
	}
}

// Every request survives JSON as it is (Source aside, which never
// crosses a process), and Exec.Run carries out each with the result type
// of its own Run.
func TestRequestsAreTyped(t *testing.T) {
	l := newLayout(t)
	reqs := []Request{
		Read{Path: "a.txt", Offset: 2, Limit: ptr(1), MaxBytes: 100},
		List{Path: "src", All: true, Recursive: true, Depth: 2, Limit: 10},
		Stat{Path: "a.txt"},
		Grep{Pattern: "one", Paths: []string{"."}, IgnoreCase: true, Limit: 5, MaxBytes: 1000, MaxLineBytes: 100, Walk: Walk{NoIgnore: true, Globs: []string{"*.txt"}}},
		Find{Glob: "*.go", Path: "src", Type: "file", Limit: 5, MaxBytes: 1000},
		Write{Path: "w.txt", Content: []byte("w\n"), Mkdir: true, Encoding: "utf-8", Mutation: Mutation{DryRun: true, Diff: "summary"}},
		Edit{Path: "a.txt", Edits: []fsops.Replacement{{Old: "one", New: "1", ReplaceAll: true}}, Mutation: Mutation{DryRun: true}},
		Patch{Patch: []byte("*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\n"), DryRun: true, Diff: "full"},
		Mkdir{Path: "m", Parents: true, DryRun: true},
		Move{Source: "src/main.go", Destination: "moved.go", DryRun: true},
		Remove{Path: "a.txt", DryRun: true},
	}
	want := []any{(*fsops.ReadResult)(nil), (*fsops.ListResult)(nil), (*fsops.StatResult)(nil), (*search.GrepResult)(nil),
		(*search.FindResult)(nil), (*fsops.WriteResult)(nil), (*fsops.EditResult)(nil), (*fsops.PatchResult)(nil), (*fsops.MkdirResult)(nil),
		(*fsops.MoveResult)(nil), (*fsops.RemoveResult)(nil)}
	ops := map[string]bool{}
	for i, r := range reqs {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(r))
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(back.Interface()); err != nil {
			t.Fatalf("%s: %v", r.Op(), err)
		}
		if got := back.Elem().Interface(); !reflect.DeepEqual(got, r) {
			t.Errorf("%s: JSON %s came back as %+v", r.Op(), data, got)
		}
		res, err := l.exec().Run(r)
		if err != nil {
			t.Errorf("%s: %v", r.Op(), err)
			continue
		}
		if reflect.TypeOf(res) != reflect.TypeOf(want[i]) {
			t.Errorf("%s: result %T, want %T", r.Op(), res, want[i])
		}
		ops[r.Op()] = true
	}
	if len(ops) != len(reqs) {
		t.Errorf("ops %v: want one name each", ops)
	}
	for _, p := range []string{"w.txt", "m", "moved.go"} {
		if _, err := os.Stat(filepath.Join(l.ws, p)); !os.IsNotExist(err) {
			t.Errorf("a dry run made %s", p)
		}
	}
	for _, p := range []string{"a.txt", "src/main.go"} {
		if _, err := os.Stat(filepath.Join(l.ws, p)); err != nil {
			t.Errorf("a dry run removed %s", p)
		}
	}
}

func errorAs(err error, target any) bool { return errors.As(err, target) }
