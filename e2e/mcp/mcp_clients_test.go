package mcp

// dsh-fs mcp under clients harness.Nobody here wrote (issue 25): what a client
// that works with the official filesystem server sends must not end or
// confuse a session of dsh-fs mcp.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// line writes one raw line to the server's standard input.
func (r *rawMcp) line(s string) {
	r.t.Helper()
	r.step()
	if _, err := io.WriteString(r.raw, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// reply reads the server's next line, which must be a JSON-RPC
// response, and returns its id (nil for null) and error code (0 for a
// result).
func (r *rawMcp) reply() (id any, code int64, msg string) {
	r.t.Helper()
	if !r.out.Scan() {
		r.t.Fatalf("the server closed its output (%v)", r.out.Err())
	}
	line := r.out.Bytes()
	if !isJSONRPCResponse(line) {
		r.t.Fatalf("not a JSON-RPC response on stdout: %.300s", line)
	}
	var resp struct {
		ID    any `json:"id"`
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(line, &resp)
	if resp.Error != nil {
		code, msg = resp.Error.Code, resp.Error.Message
	}
	return resp.ID, code, msg
}

// isJSONRPCResponse reports whether line is one JSON-RPC 2.0 response: an
// id (null only with an error) and exactly one of result and error.
func isJSONRPCResponse(line []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || string(m["jsonrpc"]) != `"2.0"` {
		return false
	}
	id, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasID || hasResult == hasError || (string(id) == "null" && !hasError) {
		return false
	}
	return len(m) == 3
}

// isJSONRPCMessage reports whether line is one JSON-RPC 2.0 message the
// server may send: a response, or a request or notification.
func isJSONRPCMessage(line []byte) bool {
	if isJSONRPCResponse(line) {
		return true
	}
	_, err := jsonrpc.DecodeMessage(line)
	return err == nil
}

// TestMcpBadInputKeepsSession: a line that is not JSON gets -32700, one
// that is JSON but no JSON-RPC message (an object id, a wrong version, a
// bare number, an empty batch) -32600, both with a null id unless the
// line had a usable one; the session goes on and the next call works.
// Nothing but JSON-RPC responses appears on stdout. Before issue 25 the
// first bad line ended the server (exit 1) after it printed a dsh-fs
// failure object on stdout.
func TestMcpBadInputKeepsSession(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	r := rawMcpStartOn(t, "2025-11-25", ws, map[string]any{}, "--tmp=false", ws)
	for _, c := range []struct {
		line string
		id   any
		code int64
	}{
		{"this is not json", nil, -32700},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"a.txt"`, nil, -32700}, // truncated
		{`{"jsonrpc":"2.0","id":4,"method":"ping"} {"jsonrpc":"2.0","id":5,"method":"ping"}`, nil, -32700},                           // two on a line
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, nil, -32600},
		{`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, nil, -32600},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, float64(7), -32600},
		{`{"jsonrpc":"2.0","id":8}`, float64(8), -32600}, // neither a request nor a response
		{`42`, nil, -32600},
		{`"tools/list"`, nil, -32600},
		{`[]`, nil, -32600},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, nil, -32600}, // no batches on 2025-11-25
		{`{"jsonrpc":"2.0","id":"s","method":7}`, "s", -32600},
		// Deeper than the SDK's decoder takes (1000 levels): it would
		// end the session at it.
		{`{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, float64(12), -32600},
	} {
		r.line(c.line)
		id, code, msg := r.reply()
		if code != c.code || fmt.Sprint(id) != fmt.Sprint(c.id) {
			t.Errorf("%.60s: id %v, code %d (%s); want id %v, code %d", c.line, id, code, msg, c.id, c.code)
		}
		if text, isErr := r.tool("read_text_file", map[string]any{"path": "a.txt"}); isErr || !strings.HasPrefix(text, "one\n") {
			t.Fatalf("after %.60s: read_text_file = %v, %q", c.line, isErr, text)
		}
	}
	// Blank lines are no messages: nothing is answered.
	r.line("")
	r.line("  \r")
	if text, isErr := r.tool("read_text_file", map[string]any{"path": "a.txt"}); isErr || !strings.HasPrefix(text, "one\n") {
		t.Fatalf("after blank lines: read_text_file = %v, %q", isErr, text)
	}
}

// TestMcpLargeMessages: a message over the SDK's 16 MiB line cap (a
// 20 MiB write_file) is served; one over dsh-fs mcp's own cap
// (mcpserver's maxMessageBytes, 64 MiB) gets -32600 without being held
// whole, and the session goes on.
func TestMcpLargeMessages(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	r := rawMcpStartOn(t, "2025-11-25", ws, map[string]any{}, "--tmp=false", ws)
	r.allow(5 * time.Minute)
	big := strings.Repeat("0123456789abcde\n", 20<<20/16)
	if text, isErr := r.tool("write_file", map[string]any{"path": "big.txt", "content": big}); isErr {
		t.Fatalf("write_file 20 MiB: %s", text)
	}
	if got := harness.ReadFile(t, filepath.Join(ws, "big.txt")); got != big {
		t.Fatalf("big.txt has %d bytes, want %d", len(got), len(big))
	}
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"huge.txt","content":"` +
		strings.Repeat("x", 65<<20) + `"}}}`
	r.line(huge)
	if id, code, msg := r.reply(); code != -32600 || id != nil || !strings.Contains(msg, "larger than") {
		t.Errorf("a 65 MiB line: id %v, code %d (%s); want a null id and -32600", id, code, msg)
	}
	if text, isErr := r.tool("read_text_file", map[string]any{"path": "a.txt"}); isErr || !strings.HasPrefix(text, "one\n") {
		t.Fatalf("after a 65 MiB line: read_text_file = %v, %q", isErr, text)
	}
	if _, err := os.Lstat(filepath.Join(ws, "huge.txt")); err == nil {
		t.Error("the line over the cap was carried out")
	}
}

// TestMcpConcurrentMessages: requests and bad lines written all at once,
// without waiting for answers, each get exactly one whole response line.
func TestMcpConcurrentMessages(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	r := rawMcpStartOn(t, "2025-11-25", ws, map[string]any{}, "--tmp=false", ws)
	const n = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"a.txt"}}}`+"\n", 1000+i)
			if i%10 == 0 {
				b.WriteString("{bad\n")
			}
		}
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(r.raw, b.String())
	}()
	seen := map[any]int{}
	for range n + n/10 {
		id, code, msg := r.reply()
		seen[id]++
		if id != nil && code != 0 {
			t.Errorf("id %v: error %d %s", id, code, msg)
		}
	}
	wg.Wait()
	if seen[nil] != n/10 {
		t.Errorf("%d parse errors answered, want %d", seen[nil], n/10)
	}
	for i := range n {
		if seen[float64(1000+i)] != 1 {
			t.Errorf("id %d answered %d times", 1000+i, seen[float64(1000+i)])
		}
	}
}

// TestMcpStdoutOnlyJSONRPC: when its input ends the server exits 0, and
// its standard output carried JSON-RPC messages and nothing else.
func TestMcpStdoutOnlyJSONRPC(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	r := rawMcpStartOn(t, "2025-11-25", ws, map[string]any{}, "--tmp=false", ws)
	r.line("not json")
	r.reply()
	r.line(`{"jsonrpc":"2.0","id":{},"method":"ping"}`)
	r.reply()
	r.raw.(io.Closer).Close()
	for r.out.Scan() {
		if !isJSONRPCMessage(r.out.Bytes()) {
			t.Errorf("stdout carries a line that is not JSON-RPC: %s", r.out.Bytes())
		}
	}
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("the server ended with %v after its input closed, want exit 0", err)
	}
}

// TestMcpInstructionsOneReadsLine: the instructions say where reads go
// once, and truly (issue 25: they said both "reads: everywhere" and
// "reads: only within the allowed folders").
func TestMcpInstructionsOneReadsLine(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tmp=false", ws}, "reads: only within the allowed folders (" + ws + ") and the writable roots"},
		{[]string{"--mode", "read-only", ws}, "reads: only within the allowed folders (" + ws + ")"},
		{[]string{"--mode", "danger-full-access", ws}, "reads: everywhere"},
	} {
		instr := harness.MCPStart(t, ws, c.args...).InitializeResult().Instructions
		var reads []string
		for _, l := range strings.Split(instr, "\n") {
			if strings.HasPrefix(l, "reads:") {
				reads = append(reads, l)
			}
		}
		if len(reads) != 1 || !strings.HasPrefix(reads[0], c.want) {
			t.Errorf("%v: reads lines %q, want one starting %q", c.args, reads, c.want)
		}
	}
}

// TestMcpTreeCapNoteCounts: a tree over the cap says how many entries
// there are, not a lower bound (issue 25: "10000 of 10200" for 12,801).
func TestMcpTreeCapNoteCounts(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	tree := filepath.Join(ws, "tree")
	for i := range 120 {
		d := filepath.Join(tree, fmt.Sprintf("d%03d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 100 {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d", j)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const total = 120 * 101 // each folder and its 100 files
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	for _, tool := range []string{"directory_tree"} {
		text := harness.MCPText(harness.MCPCall(t, s, tool, map[string]any{"path": tree}))
		if want := fmt.Sprintf("[dsh-fs: 10000 of %d entries shown;", total); !strings.Contains(text, want) {
			t.Errorf("%s: the note %q is not in %.200q", tool, want, text[max(0, len(text)-200):])
		}
	}
}

// TestMcpHintsForMCP: a hint names what an MCP client has, never a CLI
// flag (issue 25: FS_BINARY's hint named read --raw).
func TestMcpHintsForMCP(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	if err := os.WriteFile(filepath.Join(ws, "blob.bin"), []byte("PNG\x00\x01\x02\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	res := harness.MCPCall(t, s, "read_text_file", map[string]any{"path": "blob.bin"})
	text := harness.MCPText(res)
	if !res.IsError || !strings.Contains(text, "FS_BINARY") || !strings.Contains(text, "hint: read_media_file") || strings.Contains(text, "--raw") {
		t.Errorf("read_text_file of a binary file: %s", text)
	}
	res = harness.MCPCall(t, s, "edit_file", map[string]any{"path": "blob.bin", "edits": []map[string]any{{"oldText": "PNG", "newText": "GIF"}}})
	if text := harness.MCPText(res); !res.IsError || !strings.Contains(text, "hint: write_file replaces a binary file whole") {
		t.Errorf("edit_file of a binary file: %s", text)
	}
}

// TestMcpLargeEditNote: an edit of a file over diff_basis_max_bytes says
// the diff was left out and why, not "+0 -0 lines" (issue 25).
func TestMcpLargeEditNote(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	big := strings.Repeat("filler line\n", (3<<20)/12) + "MARK\n"
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	res := harness.MCPCall(t, s, "edit_file", map[string]any{"path": "big.txt", "edits": []map[string]any{{"oldText": "MARK", "newText": "DONE"}}})
	text := harness.MCPText(res)
	if res.IsError || strings.Contains(text, "+0 -0") || !strings.Contains(text, "diff left out") || !strings.Contains(text, "diff_basis_max_bytes") {
		t.Errorf("edit of a 3 MiB file:\n%s", text)
	}
	if !strings.HasSuffix(harness.ReadFile(t, filepath.Join(ws, "big.txt")), "DONE\n") {
		t.Error("the edit was not made")
	}
}
