package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The roots tests speak the protocol as a client on 2025-06-18 does, line
// by line: the SDK's own client negotiates 2026-07-28, where a server may
// not ask for roots (the feature is deprecated there).

// rawMcp is dsh-fs mcp driven over raw JSON-RPC lines. Requests the server
// sends (roots/list) are answered by onRequest.
type rawMcp struct {
	t         *testing.T
	in        *json.Encoder
	raw       io.Writer // the server's standard input, for lines not from in
	cmd       *exec.Cmd
	out       *bufio.Scanner
	next      int
	onRequest func(method string, params json.RawMessage) any
	// served counts the server's requests answered, by method.
	served map[string]int
	// initialized is the initialize result.
	initialized map[string]any
	// meta is the _meta every request carries on 2026-07-28 and later,
	// which have no initialize (SEP-2575); nil before.
	meta map[string]any
	// kill ends the server when a request goes unanswered: every
	// request sent (step) gives the server guard from then, one
	// process's harness.Timeout unless allow says more. A session of
	// many requests is not bound by one request's guard.
	kill  *time.Timer
	guard time.Duration
	// stderr is what the server said on standard error so far.
	stderr *lockedBuffer
}

// lockedBuffer is a child's standard error, read while it writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rawMcpStartModern is rawMcpStart as a client on 2026-07-28 speaks:
// no initialize, the protocol and capabilities in every request's _meta.
func rawMcpStartModern(t *testing.T, ws string, caps map[string]any, args ...string) *rawMcp {
	t.Helper()
	r := rawMcpStartOn(t, "", ws, caps, args...)
	r.meta = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "0"}}
	return r
}

func rawMcpStart(t *testing.T, ws string, caps map[string]any, args ...string) *rawMcp {
	t.Helper()
	return rawMcpStartOn(t, "2025-06-18", ws, caps, args...)
}

// rawMcpStartOn is rawMcpStart on the protocol version given.
func rawMcpStartOn(t *testing.T, protocol, ws string, caps map[string]any, args ...string) *rawMcp {
	t.Helper()
	return rawMcpStartEnv(t, protocol, ws, harness.MCPEnv(t, ws), caps, args...)
}

// rawMcpStartEnv is rawMcpStartOn with the environment env.
func rawMcpStartEnv(t *testing.T, protocol, ws string, env []string, caps map[string]any, args ...string) *rawMcp {
	t.Helper()
	c := exec.Command(harness.Bin(t), append([]string{"mcp"}, args...)...)
	stderr := &lockedBuffer{}
	c.Env, c.Dir, c.Stderr = env, ws, io.MultiWriter(os.Stderr, stderr)
	stdin, _ := c.StdinPipe()
	stdout, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(harness.Timeout, func() { c.Process.Kill() })
	t.Cleanup(func() { kill.Stop(); stdin.Close(); c.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	r := &rawMcp{t: t, in: json.NewEncoder(stdin), raw: stdin, cmd: c, out: sc, served: map[string]int{}, kill: kill, guard: harness.Timeout, stderr: stderr}
	if protocol != "" {
		r.initialized = r.call("initialize", map[string]any{"protocolVersion": protocol, "capabilities": caps,
			"clientInfo": map[string]any{"name": "raw", "version": "0"}})
		r.notify("notifications/initialized")
	}
	return r
}

// allow gives each request from now d before the server is killed, for
// a test that moves tens of MiB through it: on a loaded CI machine that
// takes longer than harness.Timeout, and the kill is only a guard
// against a hang.
func (r *rawMcp) allow(d time.Duration) {
	r.guard = d
	r.step()
}

// step starts the hang guard of a request being sent.
func (r *rawMcp) step() { r.kill.Reset(r.guard) }

func (r *rawMcp) notify(method string) {
	r.t.Helper()
	if err := r.in.Encode(map[string]any{"jsonrpc": "2.0", "method": method}); err != nil {
		r.t.Fatal(err)
	}
}

// call sends a request and returns its result, answering the server's
// own requests in between.
func (r *rawMcp) call(method string, params any) map[string]any {
	r.t.Helper()
	r.next++
	id := r.next
	if p, ok := params.(map[string]any); ok && r.meta != nil {
		p["_meta"] = r.meta
	}
	r.step()
	if err := r.in.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		r.t.Fatal(err)
	}
	for r.out.Scan() {
		var msg struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result map[string]any  `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(r.out.Bytes(), &msg); err != nil {
			r.t.Fatalf("not JSON-RPC: %s", r.out.Bytes())
		}
		switch {
		case msg.Method != "" && msg.ID != nil:
			r.served[msg.Method]++
			res := r.onRequest(msg.Method, msg.Params)
			if err := r.in.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": res}); err != nil {
				r.t.Fatal(err)
			}
		case msg.Method != "":
			// a notification from the server
		case msg.ID == float64(id):
			if msg.Error != nil {
				r.t.Fatalf("%s: error %s", method, msg.Error)
			}
			return msg.Result
		}
	}
	r.t.Fatalf("%s: the server closed its output", method)
	return nil
}

// tool calls a tool and returns its text and whether it is an error.
func (r *rawMcp) tool(name string, args map[string]any) (string, bool) {
	r.t.Helper()
	res := r.call("tools/call", map[string]any{"name": name, "arguments": args})
	var text []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			text = append(text, s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return strings.Join(text, "\n"), isErr
}

func fileRoots(paths ...string) any {
	var roots []map[string]any
	for _, p := range paths {
		roots = append(roots, map[string]any{"uri": "file://" + p, "name": filepath.Base(p)})
	}
	return map[string]any{"roots": roots}
}

// Roots a client offers narrow the allowed folder to the parts inside
// them and never widen it; a changed list is asked for again and used.
func TestMcpRootsNarrowNeverWiden(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	a, b := filepath.Join(ws, "a"), filepath.Join(ws, "b")
	harness.WriteTree(t, a, map[string]string{"keep": "k\n"})
	harness.WriteTree(t, b, map[string]string{"keep": "k\n"})
	current := []string{a, outside}
	r := rawMcpStart(t, ws, map[string]any{"roots": map[string]any{"listChanged": true}}, "--tmp=false", ws)
	r.onRequest = func(method string, _ json.RawMessage) any {
		if method != "roots/list" {
			t.Errorf("the server asked %s", method)
			return map[string]any{}
		}
		return fileRoots(current...)
	}

	// Inside the client's root a: written. In the allowed folder but
	// outside a: denied. The client's other root, outside the allowed
	// folder, widens nothing.
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(a, "x"), "content": "x"}); isErr {
		t.Fatalf("write inside the client's root: %s", text)
	}
	text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(b, "x"), "content": "x"})
	if !isErr || !strings.Contains(text, "outside the client's roots") {
		t.Errorf("write outside the client's roots = %v, %q", isErr, text)
	}
	for _, p := range []string{filepath.Join(outside, "x"), filepath.Join(ws, "top.txt")} {
		if text, isErr := r.tool("write_file", map[string]any{"path": p, "content": "x"}); !isErr {
			t.Errorf("write %s: succeeded (%s)", p, text)
		}
	}
	for _, p := range []string{filepath.Join(b, "x"), filepath.Join(outside, "x"), filepath.Join(ws, "top.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// Reads are narrowed too: b lies in the allowed folder but outside
	// the client's roots.
	if text, isErr := r.tool("read_text_file", map[string]any{"path": filepath.Join(a, "keep")}); isErr {
		t.Errorf("read inside the client's root: %s", text)
	}
	if text, isErr := r.tool("read_text_file", map[string]any{"path": filepath.Join(b, "keep")}); !isErr || !strings.Contains(text, "outside the allowed folders") {
		t.Errorf("read outside the client's roots = %v, %q", isErr, text)
	}
	if text, _ := r.tool("list_allowed_directories", map[string]any{}); text != "Allowed directories:\n"+a {
		t.Errorf("allowed directories = %q, want only %s", text, a)
	}
	if r.served["roots/list"] != 1 {
		t.Errorf("roots/list asked %d times, want once", r.served["roots/list"])
	}

	// roots/list_changed: the new list is asked for and used, and the
	// kernel layer (applied at the first write, on the configured
	// folder) does not stand in its way.
	current = []string{b}
	r.notify("notifications/roots/list_changed")
	// The server asks for the list in the background: wait for it to
	// take the new one, with a hang guard, not a speed claim.
	deadline := time.Now().Add(harness.Timeout)
	for {
		text, _ := r.tool("list_allowed_directories", map[string]any{})
		if text == "Allowed directories:\n"+b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after list_changed the allowed directories are still %q", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(b, "y"), "content": "y"}); isErr {
		t.Errorf("write in the new root: %s", text)
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(a, "y"), "content": "y"}); !isErr {
		t.Errorf("write in the old root after the change succeeded: %s", text)
	}

	// A root above the allowed folder ("/") leaves it whole, no more.
	current = []string{"/"}
	r.notify("notifications/roots/list_changed")
	deadline = time.Now().Add(harness.Timeout)
	for {
		text, _ := r.tool("list_allowed_directories", map[string]any{})
		if text == "Allowed directories:\n"+ws {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the root / the allowed directories are %q, want %s", text, ws)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(outside, "z"), "content": "z"}); !isErr {
		t.Errorf("write outside the allowed folder with the root /: %s", text)
	}
	if _, err := os.Lstat(filepath.Join(outside, "z")); err == nil {
		t.Error("the root / let a write land outside the allowed folder")
	}
}

// A client without roots keeps the configured folder, and is never asked;
// one that offers roots and lists none keeps it too, as the official
// server keeps its command-line folders (issue 25: before, it got nothing
// writable, and the MCP Inspector, which lists none by default, was
// denied 15 calls of 16).
func TestMcpRootsAbsentOrEmpty(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	r := rawMcpStart(t, ws, map[string]any{}, "--tmp=false", ws)
	r.onRequest = func(method string, _ json.RawMessage) any {
		t.Errorf("the server asked %s", method)
		return map[string]any{}
	}
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(ws, "n.txt"), "content": "n"}); isErr {
		t.Errorf("write without client roots: %s", text)
	}

	for name, list := range map[string]any{
		"empty":        map[string]any{"roots": []any{}},
		"none of file": map[string]any{"roots": []any{map[string]any{"uri": "https://example.com/x"}}},
	} {
		t.Run(name, func(t *testing.T) {
			ws2, _ := harness.MCPLayout(t)
			r2 := rawMcpStart(t, ws2, map[string]any{"roots": map[string]any{}}, "--tmp=false", ws2)
			r2.onRequest = func(string, json.RawMessage) any { return list }
			if text, isErr := r2.tool("write_file", map[string]any{"path": filepath.Join(ws2, "n.txt"), "content": "n"}); isErr {
				t.Errorf("write with no roots listed: %s", text)
			}
			if text, _ := r2.tool("list_allowed_directories", map[string]any{}); text != "Allowed directories:\n"+ws2 {
				t.Errorf("allowed directories = %q, want %s", text, ws2)
			}
			if r2.served["roots/list"] != 1 {
				t.Errorf("roots/list asked %d times, want once", r2.served["roots/list"])
			}
		})
	}
}

// A client that proposes 2026-07-28 in initialize settles on 2025-11-25,
// which has roots: it is asked for them and they narrow (issue 25: before,
// the proposal alone decided, and it was never asked).
func TestMcpRootsProposedNewerProtocol(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	a := filepath.Join(ws, "a")
	harness.WriteTree(t, a, map[string]string{"keep": "k\n"})
	r := rawMcpStartOn(t, "2026-07-28", ws, map[string]any{"roots": map[string]any{}}, "--tmp=false", ws)
	if v := r.initialized["protocolVersion"]; v != "2025-11-25" {
		t.Fatalf("initialize settled on %v, want 2025-11-25", v)
	}
	r.onRequest = func(string, json.RawMessage) any { return fileRoots(a) }
	if text, isErr := r.tool("write_file", map[string]any{"path": filepath.Join(ws, "n.txt"), "content": "n"}); !isErr {
		t.Errorf("write outside the client's root: %s", text)
	}
	if text, _ := r.tool("list_allowed_directories", map[string]any{}); text != "Allowed directories:\n"+a {
		t.Errorf("allowed directories = %q, want %s", text, a)
	}
	if r.served["roots/list"] != 1 {
		t.Errorf("roots/list asked %d times, want once", r.served["roots/list"])
	}
}
