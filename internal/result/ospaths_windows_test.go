//go:build windows

package result

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/search"
)

// On Windows a result gives its paths back as Windows spells them, not
// as the fence does ("/C:/ws/a.txt"): run under Wine on this project's
// Linux machines (GOOS=windows go test -exec …/wine-exec ./internal/result).

func TestWindowsSuccessPathsInWindowsSpelling(t *testing.T) {
	h := Header{OK: true, Op: "ls", Path: "/C:/ws", Resolved: "/C:/ws/sub dir", Mode: "workspace-write"}
	res := map[string]any{
		"entries": []map[string]string{{"path": "/C:/ws/sub dir/a.txt", "name": "a.txt"}, {"path": "rel/b.txt"}},
		"content": "see /C:/ws/a.txt\n",
		"line":    "/C:/ws/a.txt\n",
	}
	// What a file or a link holds is given back as it is, even when it is
	// one absolute path and nothing else: a read's content, a match's
	// text and its context, a symlink's stored target, what the shell
	// printed.
	whole := map[string]any{"content": "/C:/ws/a.txt", "text": "/C:/ws/b", "before": []string{"/C:/ws/c"},
		"after": []string{"/C:/ws/d"}, "target": "/C:/ws/e", "printed": "/C:/ws/f",
		"matches": []map[string]any{{"path": "/C:/ws/g", "text": "/C:/ws/h"}}}
	raw2, err := JSON(Header{OK: true, Op: "read", Path: "/C:/ws/a.txt"}, whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{`"content":"/C:/ws/a.txt"`, `"text":"/C:/ws/b"`, `"before":["/C:/ws/c"]`,
		`"after":["/C:/ws/d"]`, `"target":"/C:/ws/e"`, `"printed":"/C:/ws/f"`, `"text":"/C:/ws/h"`} {
		if !strings.Contains(string(raw2), kept) {
			t.Errorf("want %s kept as the file holds it in %s", kept, raw2)
		}
	}
	if !strings.Contains(string(raw2), `"path":"C:\\ws\\g"`) || !strings.Contains(string(raw2), `"path":"C:\\ws\\a.txt"`) {
		t.Errorf("want the paths beside them in Windows spelling in %s", raw2)
	}
	raw, err := JSON(h, res)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path, Resolved, Content, Line string
		Entries                       []map[string]string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if got.Path != `C:\ws` || got.Resolved != `C:\ws\sub dir` {
		t.Errorf("header path %q resolved %q, want C:\\ws and C:\\ws\\sub dir", got.Path, got.Resolved)
	}
	if got.Entries[0]["path"] != `C:\ws\sub dir\a.txt` || got.Entries[1]["path"] != "rel/b.txt" {
		t.Errorf("entries %q: want the absolute one in Windows spelling, the relative one as it was", got.Entries)
	}
	if got.Content != "see /C:/ws/a.txt\n" || got.Line != "/C:/ws/a.txt\n" {
		t.Errorf("content rewritten: %q, %q", got.Content, got.Line)
	}
}

func TestWindowsFailurePathsInWindowsSpelling(t *testing.T) {
	de := &policy.DeniedError{Op: "write", Path: "/C:/proj2/x.txt", Resolved: "/C:/proj2/x.txt", Workspace: "/C:/ws",
		Mode: policy.WorkspaceWrite, Reason: policy.ReasonOutsideRoots, WritableRoots: []string{"/C:/ws", "/D:/tmp"}}
	f := NewFailure(Header{Op: "write", Path: "/C:/proj2/x.txt", Resolved: "/C:/proj2/x.txt"}, de)
	if f.Path != `C:\proj2\x.txt` || f.Resolved != `C:\proj2\x.txt` || f.Error.WorkspaceRoot != `C:\ws` {
		t.Errorf("path %q resolved %q workspace %q", f.Path, f.Resolved, f.Error.WorkspaceRoot)
	}
	if strings.Join(f.Error.WritableRoots, ",") != `C:\ws,D:\tmp` {
		t.Errorf("writable roots %q", f.Error.WritableRoots)
	}
	for _, s := range []string{f.Error.Message, f.Error.Hint, f.Marker, ToolText(f)} {
		if strings.Contains(s, "/C:/") || strings.Contains(s, "/D:/") {
			t.Errorf("a path in the fence's spelling left in %q", s)
		}
	}
	e := fserr.New(fserr.NotFound, "read /C:/ws/my notes/a.txt: no such file; also /C:/ws/b")
	f = NewFailure(Header{Op: "read"}, e)
	if want := `read C:\ws\my notes\a.txt: no such file; also C:\ws\b`; f.Error.Message != want {
		t.Errorf("message %q, want %q", f.Error.Message, want)
	}
}

// TestWindowsProseAndTextInWindowsSpelling: a success's words that name a
// path (stat's way_forward and shell), the rows of the text form (grep's
// and find's paths, stat's lines, what a front end renders itself, such as
// policy's roots) and the MCP server's plain-text paths (OSPath) name it
// as Windows does. Under Wine stat's way_forward said "dsh-fs write
// /C:/…" and policy --output text listed "/C:/…" as a writable root.
func TestWindowsProseAndTextInWindowsSpelling(t *testing.T) {
	st := &fsops.StatResult{Exists: true, WritableReason: "outside writable roots",
		Shell:      "the file tool refuses /C:/ws2/x.txt: outside writable roots",
		WayForward: "for one change, dsh-fs write /C:/ws2/x.txt --escalate danger-full-access (or edit); for good, add /C:/ws2 to writable_roots"}
	h := Header{OK: true, Op: "stat", Path: "/C:/ws2/x.txt", Resolved: "/C:/ws2/x.txt"}
	raw, err := JSON(h, st)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	tx := Text{Out: &text, Note: &text}
	if err := tx.Result(h, st); err != nil {
		t.Fatal(err)
	}
	grep := &search.GrepResult{Total: 1, Matches: []search.Match{{Path: "/C:/ws/a.txt", Line: 2, Text: "see /C:/ws/b.txt", Before: []string{"x"}}}}
	if err := tx.Result(Header{OK: true, Op: "grep"}, grep); err != nil {
		t.Fatal(err)
	}
	find := &search.FindResult{Total: 1, Entries: []search.Found{{Path: "/C:/ws/sub/c.go", Type: "file", Size: 3}}}
	if err := tx.Result(Header{OK: true, Op: "find"}, find); err != nil {
		t.Fatal(err)
	}
	if err := tx.Result(Header{OK: true, Op: "policy"}, selfRendered("writable roots:\n  /C:/ws (cwd)\n")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(raw), text.String(), OSPath("/C:/ws/a b.txt")} {
		if strings.Contains(strings.ReplaceAll(s, "see /C:/ws/b.txt", ""), "/C:/") {
			t.Errorf("a path in the fence's spelling left in %s", s)
		}
	}
	for _, want := range []string{`dsh-fs write C:\ws2\x.txt --escalate`, `C:\ws\a.txt:2:see /C:/ws/b.txt`, `C:\ws\a.txt-1-x`,
		`C:\ws\sub\c.go`, `  C:\ws (cwd)`} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text: want %q in\n%s", want, text.String())
		}
	}
	if !strings.Contains(string(raw), `dsh-fs write C:\\ws2\\x.txt --escalate`) {
		t.Errorf("way_forward in the fence's spelling: %s", raw)
	}
	if got := OSPath("/C:/ws/a b.txt"); got != `C:\ws\a b.txt` {
		t.Errorf("OSPath = %q", got)
	}
}

// selfRendered is a result that renders its own text, as policy's does.
type selfRendered string

func (s selfRendered) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, string(s))
	return err
}
