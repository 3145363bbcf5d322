package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
)

// workspace is a server over ws, a workspace-write folder of real files,
// with outside/o.txt beside it, not writable:
//
//	ws/a.txt       "one\ntwo\nthree\n"
//	outside/o.txt  "o\n"
//
// The kernel layer is off (it would restrict the whole test process): the
// fence alone decides, as it does before Landlock in every call.
type workspace struct {
	ws, outside string
	m           *server
}

func newWorkspace(t *testing.T, approval policy.Approval) workspace {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := workspace{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	for name, content := range map[string]string{"ws/a.txt": "one\ntwo\nthree\n", "outside/o.txt": "o\n"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &config.Settings{
		Policy: policy.Policy{Mode: policy.WorkspaceWrite, Cwd: w.ws, Enforce: policy.EnforceOff, MaxMode: policy.DangerFullAccess,
			Approval: approval, Protected: policy.DefaultProtected},
		ReadMaxLines: 2000, ReadMaxBytes: 1 << 20, DiffContext: 3, DiffBasisMaxBytes: 1 << 20, DiffMaxBytes: 1 << 20,
	}
	_, w.m = newServer(s, []string{w.ws, w.outside})
	return w
}

func (w workspace) content(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// call is a tool call from a client that offers nothing (no roots, no
// elicitation).
var call = &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}}

// dshObject is a dsh tool's structured content, decoded, and whether it
// came as a tool error.
func dshObject(t *testing.T) func(res *mcp.CallToolResult, out any, err error) (map[string]any, bool) {
	return func(res *mcp.CallToolResult, out any, err error) (map[string]any, bool) {
		t.Helper()
		return decodeDsh(t, res, out, err)
	}
}

func decodeDsh(t *testing.T, res *mcp.CallToolResult, out any, err error) (map[string]any, bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("a dsh tool returned a protocol error: %v", err)
	}
	raw, ok := out.(json.RawMessage)
	if !ok {
		t.Fatalf("structured content %T, want the CLI's JSON object", out)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj, res != nil && res.IsError
}

func wantFailure(t *testing.T, obj map[string]any, isError bool, code fserr.Code) {
	t.Helper()
	e, _ := obj["error"].(map[string]any)
	if !isError || obj["ok"] != false || e["code"] != string(code) {
		t.Fatalf("result %v (tool error %t), want a failure with %s", obj, isError, code)
	}
}

// The dsh tools' requests run through internal/request: the header names
// the path as given and resolved, the result is the request's, and an
// argument the tool refuses (no edits, an unknown escalation) fails once
// the path resolved, with the header, changing nothing.
func TestDshToolsRunTypedRequests(t *testing.T) {
	w := newWorkspace(t, policy.ApprovalNever)
	ctx := context.Background()
	obj, isErr := dshObject(t)(w.m.dshRead(ctx, call, dshReadArgs{Path: "a.txt", Offset: 2, Limit: 1}))
	if isErr || obj["op"] != "read" || obj["resolved"] != filepath.Join(w.ws, "a.txt") || obj["content"] != "two\n" {
		t.Errorf("dsh_read: %v", obj)
	}
	obj, isErr = dshObject(t)(w.m.dshWrite(ctx, call, dshWriteArgs{Path: "d/n.txt", Content: "n\n", Mkdir: true}))
	if isErr || obj["op"] != "write" || obj["created"] != true || w.content(t, filepath.Join(w.ws, "d/n.txt")) != "n\n" {
		t.Errorf("dsh_write: %v", obj)
	}
	obj, isErr = dshObject(t)(w.m.dshEdit(ctx, call, dshEditArgs{Path: "a.txt"}))
	wantFailure(t, obj, isErr, fserr.InvalidArgument)
	if obj["resolved"] != filepath.Join(w.ws, "a.txt") {
		t.Errorf("dsh_edit with no edits: header %v, want the path resolved", obj)
	}
	obj, isErr = dshObject(t)(w.m.dshEdit(ctx, call, dshEditArgs{Path: "a.txt", Edits: []fsops.Replacement{{Old: "one", New: "1"}}, Escalate: "root"}))
	wantFailure(t, obj, isErr, fserr.InvalidArgument)
	if got := w.content(t, filepath.Join(w.ws, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("a refused edit changed a.txt to %q", got)
	}
	obj, isErr = dshObject(t)(w.m.dshLs(ctx, call, dshLsArgs{}))
	if isErr || obj["op"] != "ls" || obj["path"] != "." || obj["total"] != float64(2) {
		t.Errorf("dsh_ls: %v", obj)
	}
	obj, isErr = dshObject(t)(w.m.dshStat(ctx, call, pathArgs{Path: "../outside/o.txt"}))
	if isErr || obj["writable"] != false {
		t.Errorf("dsh_stat outside: %v", obj)
	}
	obj, isErr = dshObject(t)(w.m.dshPatch(ctx, call, dshPatchArgs{Patch: "*** Begin Patch\n*** Update File: ../outside/o.txt\n@@\n-o\n+q\n*** End Patch\n"}))
	wantFailure(t, obj, isErr, fserr.SandboxDenied)
	if r, _ := obj["resolved"].(string); r != "" {
		t.Errorf("dsh_patch: header %v names a path; a patch has none", obj)
	}
	if got := w.content(t, filepath.Join(w.outside, "o.txt")); got != "o\n" {
		t.Errorf("a denied patch changed o.txt to %q", got)
	}
}

// The drop-in tools keep their semantics over internal/request: head and
// tail windows, an edit's diff, a refused escalation that names the
// denied end of a move, and a failure before anything ran.
func TestDropInToolsRunTypedRequests(t *testing.T) {
	w := newWorkspace(t, policy.ApprovalNever)
	ctx := context.Background()
	for _, tc := range []struct {
		in   readTextArgs
		want string
	}{
		{readTextArgs{Path: "a.txt"}, "one\ntwo\nthree\n"},
		{readTextArgs{Path: "a.txt", Head: ptr(1)}, "one\n"},
		{readTextArgs{Path: "a.txt", Tail: ptr(2)}, "two\nthree\n"},
		{readTextArgs{Path: "a.txt", Tail: ptr(9)}, "one\ntwo\nthree\n"},
	} {
		_, out, err := w.m.readTextFile(ctx, call, tc.in)
		if err != nil || out.Content != tc.want {
			t.Errorf("read_text_file %+v: %q, %v; want %q", tc.in, out.Content, err, tc.want)
		}
	}
	if _, _, err := w.m.readTextFile(ctx, call, readTextArgs{Path: "a.txt", Tail: ptr(0)}); err == nil || !strings.Contains(err.Error(), "tail must be 1 or more") {
		t.Errorf("tail 0: %v", err)
	}
	_, out, err := w.m.editFile(ctx, call, editFileArgs{Path: "a.txt", Edits: []editOp{{OldText: "two", NewText: "2"}}, DryRun: true})
	if err != nil || !strings.Contains(out.Content, "+2") || w.content(t, filepath.Join(w.ws, "a.txt")) != "one\ntwo\nthree\n" {
		t.Errorf("edit_file dry run: %q, %v", out.Content, err)
	}
	if _, _, err := w.m.editFile(ctx, call, editFileArgs{Path: "a.txt\x00", Edits: []editOp{{OldText: "two", NewText: "2"}}}); err == nil || !strings.Contains(err.Error(), string(fserr.InvalidArgument)) {
		t.Errorf("edit_file of a bad path: %v", err)
	}
	if _, out, err := w.m.writeFile(ctx, call, writeFileArgs{Path: "a.txt", Content: "A\n"}); err != nil || w.content(t, filepath.Join(w.ws, "a.txt")) != "A\n" {
		t.Errorf("write_file over a file: %q, %v", out.Content, err)
	}
	_, _, err = w.m.moveFile(ctx, call, moveArgs{Source: "a.txt", Destination: "../outside/a.txt", Escalate: "danger-full-access"})
	if err == nil || !strings.Contains(err.Error(), "../outside/a.txt") || !strings.Contains(err.Error(), string(fserr.SandboxDenied)) {
		t.Errorf("move_file out of the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "a.txt")); err != nil {
		t.Errorf("a refused move took the source away: %v", err)
	}
	if _, out, err := w.m.searchFiles(ctx, call, searchArgs{Path: ".", Pattern: "*.txt"}); err != nil || out.Content != filepath.Join(w.ws, "a.txt") {
		t.Errorf("search_files: %q, %v; want the full path", out.Content, err)
	}
}

// An approval is pinned to what the user was shown: pinned sets the
// typed request's IfMatch from the preview, so the change runs on the
// content shown and on nothing else (FS_STALE after a change in
// between); a write that was shown creating a file only creates it.
func TestPinnedToThePreview(t *testing.T) {
	w := newWorkspace(t, policy.ApprovalNever)
	x, _, err := w.m.begin(nil, ".")
	if err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(w.outside, "o.txt")
	for _, r := range []request.Request{
		request.Write{Path: o, Content: []byte("w\n"), Overwrite: true},
		request.Edit{Path: o, Edits: []fsops.Replacement{{Old: "o", New: "e"}}},
		request.Patch{Patch: []byte("*** Begin Patch\n*** Update File: " + o + "\n@@\n-o\n+p\n*** End Patch\n")},
	} {
		d, shown, err := preview(x, r)
		if err != nil || !strings.Contains(d.Text, "-o") {
			t.Fatalf("%s: preview %+v, %v", r.Op(), d, err)
		}
		if w.content(t, o) != "o\n" {
			t.Fatalf("%s: a preview wrote", r.Op())
		}
		pin := pinned(r, &shown)
		if err := os.WriteFile(o, []byte("o\nchanged\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// The approved call runs elsewhere, where the escalation lets it
		// write outside the workspace: a fence in danger-full-access.
		start := w.m.start(nil)
		start.Policy.Mode = policy.DangerFullAccess
		runElsewhere := func() error {
			x, _ := request.Begin(start)
			_, err := x.Run(pin)
			return err
		}
		if err := runElsewhere(); fserr.CodeOf(err) != fserr.Stale {
			t.Errorf("%s: pinned %+v ran on changed content: %v", r.Op(), pin, err)
		}
		os.WriteFile(o, []byte("o\n"), 0o644)
		if err := runElsewhere(); err != nil {
			t.Errorf("%s: pinned to the content shown: %v", r.Op(), err)
		}
		os.WriteFile(o, []byte("o\n"), 0o644)
	}
	created := request.Write{Path: filepath.Join(w.outside, "new.txt"), Content: []byte("n\n"), Overwrite: true}
	_, shown, err := preview(x, created)
	if err != nil || shown.Exists {
		t.Fatalf("preview of a new file: %+v, %v", shown, err)
	}
	if pin := pinned(created, &shown).(request.Write); pin.Overwrite || pin.IfMatch != "" {
		t.Errorf("a write shown creating its file is pinned as %+v, want it only to create", pin)
	}
	if _, _, err := preview(x, request.Mkdir{Path: "m"}); fserr.CodeOf(err) != fserr.InvalidArgument {
		t.Errorf("preview of a mkdir: %v", err)
	}
	patch := request.Patch{Patch: []byte("x"), IfMatch: map[string]string{"a": "1"}}
	pinned(patch, &approvalState{Pins: map[string]string{"b": "2"}})
	if len(patch.IfMatch) != 1 {
		t.Errorf("pinning a patch changed the caller's pins: %v", patch.IfMatch)
	}
}

// The digest of a call differs with anything the user was shown.
func TestCallDigest(t *testing.T) {
	w := request.Write{Path: "a", Content: []byte("x")}
	base := callDigest("/w/a", policy.DangerFullAccess, w)
	other := w
	other.Content = []byte("y")
	for name, d := range map[string]string{
		"content": callDigest("/w/a", policy.DangerFullAccess, other),
		"path":    callDigest("/w/b", policy.DangerFullAccess, w),
		"mode":    callDigest("/w/a", policy.WorkspaceWrite, w),
		"op":      callDigest("/w/a", policy.DangerFullAccess, request.Edit{Path: "a"}),
	} {
		if d == base {
			t.Errorf("another %s, the same digest", name)
		}
	}
}
