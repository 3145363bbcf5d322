package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary is also the child: a tiny stdio server that answers
// initialize and ping, and for "ask" sends a notification and a roots/list
// request of its own before it answers with what the client replied.
func TestMain(m *testing.M) {
	if os.Getenv("MCPBRIDGE_TEST_CHILD") == "echo" {
		echoChild(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Lines the child writes, byte for byte: the bridge must hand them on unchanged.
const (
	initAnswer  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"echo","version":"0"}}}`
	askNote     = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}}`
	askRequest  = `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`
	laterNote   = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	notJSONLine = `this is not JSON`
)

func echoChild(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	say := func(s string) { io.WriteString(out, s+"\n") }
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch m.Method {
		case "initialize":
			say(initAnswer)
		case "ping":
			say(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		case "ask":
			say(askNote)
			say(askRequest)
			if !sc.Scan() {
				return
			}
			say(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"got":` + sc.Text() + `}}`)
		case "later":
			say(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
			say(laterNote)
			say(notJSONLine)
		}
	}
}

func startBridge(t *testing.T) *httptest.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPBRIDGE_TEST_CHILD", "echo")
	b := newBridge([]string{exe}, log.New(io.Discard, "", 0))
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		b.endAll()
	})
	return srv
}

func send(t *testing.T, method, url, session, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// initialize opens a session: its answer is the child's line as JSON, and
// the session id comes with it.
func initialize(t *testing.T, url string) string {
	t.Helper()
	resp := send(t, "POST", url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"0"}}}`)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || body != initAnswer {
		t.Fatalf("initialize: %d %q %q, want 200 application/json %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, initAnswer)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if len(id) != 32 {
		t.Fatalf("Mcp-Session-Id %q, want 32 hex digits", id)
	}
	return id
}

// sseEvents reads the data lines of an SSE body, one at a time.
func sseEvents(body io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case d, ok := <-ch:
		if !ok {
			t.Fatal("the SSE stream ended early")
		}
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no SSE event in 10 s")
	}
	return ""
}

func TestBridgeRoundTrip(t *testing.T) {
	srv := startBridge(t)
	url := srv.URL + "/mcp"
	session := initialize(t, url)

	// A notification is passed on and answered 202 with no body.
	resp := send(t, "POST", url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if body := readAll(t, resp); resp.StatusCode != 202 || body != "" {
		t.Fatalf("notification: %d %q, want 202 and no body", resp.StatusCode, body)
	}

	// A pretty-printed request reaches the child as one line; its only
	// message back is the answer, so it comes as JSON.
	resp = send(t, "POST", url, session, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"method\": \"ping\"\n}")
	if body := readAll(t, resp); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("ping: %d %q", resp.StatusCode, body)
	}

	// What the child says before its answer makes the POST an SSE stream
	// carrying it in order; the client's answer to the child's request is
	// POSTed back (202) and reaches the child.
	resp = send(t, "POST", url, session, `{"jsonrpc":"2.0","id":8,"method":"ask"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("ask: %d %q, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sseEvents(resp.Body)
	if got := next(t, events); got != askNote {
		t.Fatalf("first event %q, want %q", got, askNote)
	}
	if got := next(t, events); got != askRequest {
		t.Fatalf("second event %q, want %q", got, askRequest)
	}
	reply := `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`
	r2 := send(t, "POST", url, session, reply)
	if body := readAll(t, r2); r2.StatusCode != 202 || body != "" {
		t.Fatalf("client's answer: %d %q, want 202 and no body", r2.StatusCode, body)
	}
	if got, want := next(t, events), `{"jsonrpc":"2.0","id":8,"result":{"got":`+reply+`}}`; got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if d, ok := <-events; ok {
		t.Fatalf("the stream goes on after its answer: %q", d)
	}
	resp.Body.Close()

	// What the child says after its answer, with no POST in flight, waits
	// for the GET stream, a line that is not JSON included.
	resp = send(t, "POST", url, session, `{"jsonrpc":"2.0","id":9,"method":"later"}`)
	if body := readAll(t, resp); body != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Fatalf("later: %q", body)
	}
	get := send(t, "GET", url, session, "", "Accept", "text/event-stream")
	if get.StatusCode != 200 {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	events = sseEvents(get.Body)
	if got := next(t, events); got != laterNote {
		t.Fatalf("GET stream: %q, want %q", got, laterNote)
	}
	if got := next(t, events); got != notJSONLine {
		t.Fatalf("GET stream: %q, want %q", got, notJSONLine)
	}
	if dup := send(t, "GET", url, session, "", "Accept", "text/event-stream"); dup.StatusCode != http.StatusConflict {
		t.Fatalf("a second GET stream: %d, want 409", dup.StatusCode)
	}
	get.Body.Close()

	// DELETE ends the session and its child.
	if del := send(t, "DELETE", url, session, ""); del.StatusCode != 200 {
		t.Fatalf("DELETE: %d", del.StatusCode)
	}
	if resp := send(t, "POST", url, session, `{"jsonrpc":"2.0","id":10,"method":"ping"}`); resp.StatusCode != 404 {
		t.Fatalf("after DELETE: %d, want 404", resp.StatusCode)
	}
}

// What the bridge refuses it refuses with an HTTP status, before anything
// reaches a child.
func TestBridgeRefuses(t *testing.T) {
	srv := startBridge(t)
	url := srv.URL + "/mcp"
	session := initialize(t, url)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, c := range []struct {
		name, session, body string
		header              []string
		want                int
	}{
		{"no session id", "", ping, nil, 400},
		{"unknown session id", strings.Repeat("0", 32), ping, nil, 404},
		{"not JSON", session, `{"jsonrpc":`, nil, 400},
		{"a batch", session, "[" + ping + "]", nil, 400},
		{"a foreign Host (DNS rebinding)", session, ping, []string{"Host", "evil.example.com"}, 403},
		{"a foreign Origin", session, ping, []string{"Origin", "http://evil.example.com"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(c.body))
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.session != "" {
				req.Header.Set("Mcp-Session-Id", c.session)
			}
			for i := 0; i+1 < len(c.header); i += 2 {
				if c.header[i] == "Host" {
					req.Host = c.header[i+1]
				} else {
					req.Header.Set(c.header[i], c.header[i+1])
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%d, want %d", resp.StatusCode, c.want)
			}
		})
	}
	// The session survived all of it.
	resp := send(t, "POST", url, session, ping)
	if body := readAll(t, resp); body != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("ping after the refusals: %d %q", resp.StatusCode, body)
	}
}

// A server that exits without answering its initialize: the POST gets
// 502 from the bridge (no JSON-RPC message of its own), and no session
// is kept.
func TestBridgeServerExitsBeforeAnswering(t *testing.T) {
	b := newBridge([]string{"true"}, log.New(io.Discard, "", 0))
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.endAll()
	resp := send(t, "POST", srv.URL+"/mcp", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusBadGateway || strings.HasPrefix(body, "{") {
		t.Fatalf("%d %q, want 502 and a text body", resp.StatusCode, body)
	}
	b.mu.Lock()
	n := len(b.sessions)
	b.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d session(s) kept for a server that exited", n)
	}
}
