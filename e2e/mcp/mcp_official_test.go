package mcp

// Where the drop-in meets the official server's behaviour (issue 39),
// each case taken from what @modelcontextprotocol/server-filesystem
// 2026.8.31 does: its read_media_file URI, the client roots and the
// command-line folders it skips, its "~", and the edit that changes
// nothing.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMcpMediaURIPercentEncoded: a file that is neither image nor audio
// comes as an embedded resource whose URI is percent-encoded, as Node's
// url.pathToFileURL makes the official server's: before, "file://" and
// the path as it is, a space and an "é" in it.
func TestMcpMediaURIPercentEncoded(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	if regexp.MustCompile(`[^A-Za-z0-9/._-]`).MatchString(ws) {
		t.Skipf("the workspace %s has characters this test does not encode itself", ws)
	}
	name := "my café #1 [x]~.bin"
	harness.WriteTree(t, ws, map[string]string{name: "\x00\x01bin"})
	s := harness.MCPStart(t, ws, ws)
	res := harness.MCPCall(t, s, "read_media_file", map[string]any{"path": name})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("read_media_file: %s", harness.MCPText(res))
	}
	er, ok := res.Content[0].(*mcp.EmbeddedResource)
	if !ok || er.Resource == nil {
		t.Fatalf("content %T, want an embedded resource", res.Content[0])
	}
	// pathToFileURL("…/my café #1 [x]~.bin") on Node 22.
	want := "file://" + ws + "/my%20caf%C3%A9%20%231%20%5Bx%5D%7E.bin"
	if er.Resource.URI != want || er.Resource.MIMEType != "application/octet-stream" || string(er.Resource.Blob) != "\x00\x01bin" {
		t.Errorf("resource %q %q %q, want URI %q", er.Resource.URI, er.Resource.MIMEType, er.Resource.Blob, want)
	}
}

// TestMcpRootsMissingOrFileSkipped: client roots that name a missing
// folder or a file are skipped with a message on standard error, never
// listed or served (before, both were kept and listed as allowed
// directories); "~/x", a plain path as the official server takes one, is
// the user database's home's x.
func TestMcpRootsMissingOrFileSkipped(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	a := filepath.Join(ws, "a")
	harness.WriteTree(t, a, map[string]string{"keep": "k\n"})
	missing, file := filepath.Join(ws, "missing"), filepath.Join(ws, "a.txt")
	current := fileRoots(a, missing, file)
	r := rawMcpStart(t, ws, map[string]any{"roots": map[string]any{"listChanged": true}}, "--tmp=false", ws)
	r.onRequest = func(string, json.RawMessage) any { return current }
	if text, _ := r.tool("list_allowed_directories", map[string]any{}); text != "Allowed directories:\n"+a {
		t.Errorf("allowed directories = %q, want only %s", text, a)
	}
	// The missing root made later is still no root: nothing in it is
	// writable.
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(missing, "x"), "content": "x"}); !isErr {
		t.Errorf("write in a root skipped as missing: %s", text)
	}
	for _, want := range []string{"skipping the client's root file://" + missing + ": no such folder",
		"skipping the client's root file://" + file + ": not a folder"} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("standard error lacks %q:\n%s", want, r.stderr.String())
		}
	}

	// "~/proj": the home of the user database (DSH_FS_TEST_HOME for the
	// test binary), here inside the allowed folder.
	t.Run("home", func(t *testing.T) {
		ws, _ := harness.MCPLayout(t)
		env := harness.MCPEnv(t, ws)
		home, err := filepath.EvalSymlinks(envValue(env, "DSH_FS_TEST_HOME"))
		if err != nil {
			t.Fatal(err)
		}
		harness.WriteTree(t, filepath.Join(home, "proj"), map[string]string{"keep": "k\n"})
		harness.WriteTree(t, filepath.Join(fakeHome(t, env), "proj"), map[string]string{"keep": "k\n"})
		r := rawMcpStartEnv(t, "2025-06-18", ws, env, map[string]any{"roots": map[string]any{}}, "--tmp=false", ws, home)
		r.onRequest = func(string, json.RawMessage) any {
			return map[string]any{"roots": []any{map[string]any{"uri": "~/proj"}}}
		}
		if text, _ := r.tool("list_allowed_directories", map[string]any{}); text != "Allowed directories:\n"+filepath.Join(home, "proj") {
			t.Errorf("allowed directories = %q, want %s", text, filepath.Join(home, "proj"))
		}
	})
}

// fakeHome points $HOME in env at a new folder, away from the user
// database's home (DSH_FS_TEST_HOME), and returns it.
func fakeHome(t *testing.T, env []string) string {
	fake := t.TempDir()
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + fake
		}
	}
	return fake
}

// envValue is the value of key in env.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// startWithStderr starts dsh-fs mcp ARGS with env in ws, its standard
// error in the buffer returned.
func startWithStderr(t *testing.T, ws string, env []string, args ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	stderr := &lockedBuffer{}
	c := exec.Command(harness.Bin(t), append([]string{"mcp", "--tmp=false"}, args...)...)
	c.Env, c.Dir, c.Stderr = env, ws, stderr
	return harness.MCPConnect(t, c, nil), stderr
}

// TestMcpFoldersMissingSkipped: command-line folders that are missing or
// not folders are skipped with a message on standard error, the first one
// too, and what is left is served. Before, a missing first folder made the
// server exit, and a missing later one was served as a writable root.
func TestMcpFoldersMissingSkipped(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	missing, later, file := filepath.Join(ws, "missing"), filepath.Join(ws, "later"), filepath.Join(ws, "a.txt")
	src := filepath.Join(ws, "src")
	s, stderr := startWithStderr(t, ws, harness.MCPEnv(t, ws), missing, file, src, later)
	if got := harness.MCPText(harness.MCPCall(t, s, "list_allowed_directories", map[string]any{})); got != "Allowed directories:\n"+src {
		t.Errorf("allowed directories = %q, want only %s", got, src)
	}
	// The later folder, made after the start, is still no writable root.
	if err := os.Mkdir(later, 0o755); err != nil {
		t.Fatal(err)
	}
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(later, "x"), "content": "x"}); !res.IsError {
		t.Errorf("write in a folder skipped as missing: %s", harness.MCPText(res))
	}
	if _, err := os.Lstat(filepath.Join(later, "x")); err == nil {
		t.Error("a folder skipped as missing was written")
	}
	if res := harness.MCPCall(t, s, "write_file", map[string]any{"path": filepath.Join(src, "x"), "content": "x"}); res.IsError {
		t.Errorf("write in the folder served: %s", harness.MCPText(res))
	}
	for _, want := range []string{"skipping " + missing + ": no such folder", "skipping " + file + ": not a folder", "skipping " + later + ": no such folder"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("standard error lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestMcpNoFolderLeft: when every folder given is skipped, the server does
// not start, as the official one exits 1 ("None of the specified
// directories are accessible"): exit 1, FS_NOT_FOUND, each folder named on
// standard error.
func TestMcpNoFolderLeft(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	missing, file := filepath.Join(ws, "missing"), filepath.Join(ws, "a.txt")
	c := exec.Command(harness.Bin(t), "mcp", "--tmp=false", missing, file)
	c.Env, c.Dir = harness.MCPEnv(t, ws), ws
	var stdout, stderr bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &stdout, &stderr
	err := c.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(stdout.String(), `"FS_NOT_FOUND"`) {
		t.Fatalf("exit %v, want 1 and FS_NOT_FOUND:\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"skipping " + missing + ": no such folder", "skipping " + file + ": not a folder"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("standard error lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestMcpHomeFromUserDatabase: "~" and "~/x" on the command line are the
// home folder of the user database, not $HOME (a difference from the
// official server, which takes os.homedir(), $HOME first: docs/mcp.md).
// Before, "~/proj" was a folder named "~" under the current one.
func TestMcpHomeFromUserDatabase(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	env := harness.MCPEnv(t, ws)
	home := envValue(env, "DSH_FS_TEST_HOME")
	fake := fakeHome(t, env)
	harness.WriteTree(t, filepath.Join(home, "proj"), map[string]string{"p.txt": "user database\n"})
	harness.WriteTree(t, filepath.Join(fake, "proj"), map[string]string{"p.txt": "$HOME\n"})
	home, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	s, stderr := startWithStderr(t, ws, env, "~/proj", "~")
	if got, want := harness.MCPText(harness.MCPCall(t, s, "list_allowed_directories", map[string]any{})), "Allowed directories:\n"+filepath.Join(home, "proj")+"\n"+home; got != want {
		t.Errorf("allowed directories = %q, want %q\n%s", got, want, stderr.String())
	}
	if got := harness.MCPText(harness.MCPCall(t, s, "read_text_file", map[string]any{"path": "p.txt"})); got != "user database\n" {
		t.Errorf("p.txt in the first folder = %q", got)
	}
}

// officialHeader is the head of the official server's edit_file diff for
// path (jsdiff's createTwoFilesPatch).
func officialHeader(path string) string {
	return "Index: " + path + "\n" + strings.Repeat("=", 67) + "\n--- " + path + "\toriginal\n+++ " + path + "\tmodified\n"
}

// TestMcpEditNoChange: an edit whose new text equals the old answers the
// official server's empty diff, byte for byte, and leaves the file as it
// was; before, it was refused (FS_INVALID_ARGUMENT). Its old text must
// still be found once, as any edit's. A diff that changes something
// has the official server's header too.
func TestMcpEditNoChange(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, ws)
	a := filepath.Join(ws, "a.txt")
	for _, args := range []map[string]any{
		{"path": "a.txt", "edits": []map[string]string{{"oldText": "two", "newText": "two"}}},
		{"path": a, "edits": []map[string]string{{"oldText": "two\n", "newText": "two\n"}, {"oldText": "four", "newText": "four"}}, "dryRun": true},
	} {
		res := harness.MCPCall(t, s, "edit_file", args)
		if got, want := harness.MCPText(res), "```diff\n"+officialHeader(a)+"```\n\n"; res.IsError || got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
	if got := harness.ReadFile(t, a); got != "one\ntwo\nthree\nfour\nfive\n" {
		t.Errorf("a.txt = %q", got)
	}
	res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "absent", "newText": "absent"}}})
	if !res.IsError || !strings.Contains(harness.MCPText(res), "FS_EDIT_NO_MATCH") {
		t.Errorf("a no-change edit of absent text: %s", harness.MCPText(res))
	}
	res = harness.MCPCall(t, s, "edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "one"}, {"oldText": "two", "newText": "TWO"}}})
	if got := harness.MCPText(res); res.IsError || !strings.HasPrefix(got, "```diff\n"+officialHeader(a)+"@@ ") || !strings.Contains(got, "-two\n+TWO\n") {
		t.Errorf("an edit that changes a line: %q", got)
	}
	if got := harness.ReadFile(t, a); got != "one\nTWO\nthree\nfour\nfive\n" {
		t.Errorf("a.txt = %q", got)
	}
}
