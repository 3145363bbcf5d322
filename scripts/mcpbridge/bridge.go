package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxBody bounds one POSTed message: far above any call the conformance
// suite makes, and above a write_file of tens of MiB.
const maxBody = 256 << 20

// maxQueued bounds the messages kept for a session that has no stream to
// carry them (no SSE-capable POST in flight, no GET stream open).
const maxQueued = 10000

// bridge is the streamable HTTP side: one child process per MCP session,
// started by the session's initialize.
type bridge struct {
	argv []string
	log  *log.Logger

	mu       sync.Mutex
	sessions map[string]*session
}

func newBridge(argv []string, logger *log.Logger) *bridge {
	return &bridge{argv: argv, log: logger, sessions: map[string]*session{}}
}

// session is one child and the HTTP streams that carry its output.
type session struct {
	id    string
	b     *bridge
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lineMu keeps each message written to the child a whole line.
	lineMu sync.Mutex
	// done is closed when the child's stdout ends, after every line it
	// wrote was routed; exited once the child has been waited for and its
	// end logged.
	done, exited chan struct{}

	mu sync.Mutex
	// pending: the stream waiting for the answer to each request id (the
	// id's JSON text, as the client wrote it).
	pending map[string]*stream
	// progress: the stream of the request that carried each progressToken.
	progress map[string]*stream
	// open: the POST streams in flight that may carry SSE, oldest first.
	open  []*stream
	get   *stream
	queue [][]byte
}

// stream is what one HTTP response carries: the answer to its request (a
// POST) and whatever else the child says that is routed to it.
type stream struct {
	sse  bool // the client accepts text/event-stream
	wake chan struct{}

	mu       sync.Mutex
	out      [][]byte
	answered bool
}

func newStream(sse bool) *stream { return &stream{sse: sse, wake: make(chan struct{}, 1)} }

func (st *stream) push(line []byte, answer bool) {
	st.mu.Lock()
	st.out = append(st.out, line)
	st.answered = st.answered || answer
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

func (st *stream) take() ([][]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := st.out
	st.out = nil
	return out, st.answered
}

// envelope is as much of a JSON-RPC message as routing needs.
type envelope struct {
	ID     json.RawMessage  `json:"id"`
	Method *string          `json:"method"`
	Params *json.RawMessage `json:"params"`
}

func (e envelope) hasID() bool { return len(e.ID) > 0 && string(e.ID) != "null" }

// progressToken is params._meta.progressToken of a request, or
// params.progressToken of a notifications/progress, as JSON text.
func (e envelope) progressToken() string {
	if e.Params == nil {
		return ""
	}
	var p struct {
		Token json.RawMessage `json:"progressToken"`
		Meta  struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(*e.Params, &p) != nil {
		return ""
	}
	if len(p.Token) > 0 {
		return string(p.Token)
	}
	return string(p.Meta.Token)
}

func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	// DNS rebinding: a browser page whose name resolves to 127.0.0.1 sends
	// its own Host and Origin; only loopback names reach a child.
	if !loopbackHost(r.Host) {
		http.Error(w, "mcpbridge: Host is not a loopback name", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !loopbackHost(u.Host) {
			http.Error(w, "mcpbridge: Origin is not a loopback name", http.StatusForbidden)
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		b.post(w, r)
	case http.MethodGet:
		b.listen(w, r)
	case http.MethodDelete:
		ss := b.lookup(w, r)
		if ss == nil {
			return
		}
		ss.end()
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "mcpbridge: method not allowed", http.StatusMethodNotAllowed)
	}
}

// loopbackHost: hostport (or a bare host) names this machine's loopback.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func acceptsSSE(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return a == "" || strings.Contains(a, "text/event-stream") || strings.Contains(a, "*/*")
}

// lookup finds the request's session, or answers as the transport says:
// 400 without Mcp-Session-Id, 404 for one that is not (or no longer) known.
func (b *bridge) lookup(w http.ResponseWriter, r *http.Request) *session {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, "mcpbridge: Mcp-Session-Id missing", http.StatusBadRequest)
		return nil
	}
	b.mu.Lock()
	ss := b.sessions[id]
	b.mu.Unlock()
	if ss == nil {
		http.Error(w, "mcpbridge: no such session", http.StatusNotFound)
	}
	return ss
}

func (b *bridge) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "mcpbridge: reading the body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	// One line to the child: the message as sent, its insignificant
	// whitespace (newlines included) taken out.
	var line bytes.Buffer
	if err := json.Compact(&line, body); err != nil {
		http.Error(w, "mcpbridge: the body is not one JSON value", http.StatusBadRequest)
		return
	}
	if line.Len() > 0 && line.Bytes()[0] == '[' {
		// Batches left the protocol in 2025-06-18; bridging one would
		// need its answers merged, which is the server's to do.
		http.Error(w, "mcpbridge: JSON-RPC batches are not bridged", http.StatusBadRequest)
		return
	}
	var env envelope
	if err := json.Unmarshal(line.Bytes(), &env); err != nil {
		http.Error(w, "mcpbridge: the body is not a JSON object", http.StatusBadRequest)
		return
	}
	line.WriteByte('\n')

	var ss *session
	created := false
	if r.Header.Get("Mcp-Session-Id") == "" && env.Method != nil && *env.Method == "initialize" {
		if ss, err = b.start(); err != nil {
			http.Error(w, "mcpbridge: starting the server: "+err.Error(), http.StatusBadGateway)
			return
		}
		created = true
	} else if ss = b.lookup(w, r); ss == nil {
		return
	}

	if env.Method == nil || !env.hasID() {
		// A notification or the client's answer to the child's request:
		// nothing comes back on this POST.
		if err := ss.write(line.Bytes()); err != nil {
			http.Error(w, "mcpbridge: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}

	st := newStream(acceptsSSE(r))
	key := string(env.ID)
	if !ss.register(key, env.progressToken(), st) {
		http.Error(w, "mcpbridge: a request with this id is already in flight", http.StatusBadRequest)
		return
	}
	defer ss.unregister(key, st)
	if created {
		w.Header().Set("Mcp-Session-Id", ss.id)
	}
	if err := ss.write(line.Bytes()); err != nil {
		if created {
			ss.end()
		}
		http.Error(w, "mcpbridge: "+err.Error(), http.StatusBadGateway)
		return
	}
	answered := serve(w, r, st, ss.done, false)
	if created && !answered {
		// The child never answered its initialize: no session to keep.
		ss.end()
	}
}

// serve writes what st receives until its answer is out (a POST's) or the
// client or the child goes. A POST whose only message is its answer gets
// it as application/json; anything before the answer makes it SSE.
// Reports whether the answer was written.
func serve(w http.ResponseWriter, r *http.Request, st *stream, childDone <-chan struct{}, listener bool) bool {
	flusher, _ := w.(http.Flusher)
	sse := false
	startSSE := func() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		sse = true
	}
	if listener {
		startSSE()
		if flusher != nil {
			flusher.Flush()
		}
	}
	for {
		gone := false
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return false
		case <-childDone:
			gone = true
		}
		msgs, answered := st.take()
		if !sse && !listener && answered && len(msgs) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(msgs[0])
			return true
		}
		if len(msgs) > 0 && !sse {
			startSSE()
		}
		for _, m := range msgs {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
		}
		// A flush before anything was written would send a 200 of its own.
		if sse && flusher != nil {
			flusher.Flush()
		}
		if answered {
			return true
		}
		if gone {
			if !sse {
				http.Error(w, "mcpbridge: the server exited without answering", http.StatusBadGateway)
			}
			return false
		}
	}
}

// listen is the GET stream: what the child says that no POST carries.
func (b *bridge) listen(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "mcpbridge: GET needs Accept: text/event-stream", http.StatusMethodNotAllowed)
		return
	}
	ss := b.lookup(w, r)
	if ss == nil {
		return
	}
	st := newStream(true)
	ss.mu.Lock()
	if ss.get != nil {
		ss.mu.Unlock()
		http.Error(w, "mcpbridge: this session has a GET stream already", http.StatusConflict)
		return
	}
	ss.get = st
	for _, m := range ss.queue {
		st.push(m, false)
	}
	ss.queue = nil
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.get = nil
		// What the client did not take waits for the next stream.
		msgs, _ := st.take()
		ss.queue = append(msgs, ss.queue...)
		ss.mu.Unlock()
	}()
	serve(w, r, st, ss.done, true)
}

func (b *bridge) start() (*session, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	cmd := exec.Command(b.argv[0], b.argv[1:]...)
	cmd.Stderr = os.Stderr
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ss := &session{
		id: hex.EncodeToString(raw[:]), b: b, cmd: cmd, stdin: stdin,
		done: make(chan struct{}), exited: make(chan struct{}), pending: map[string]*stream{}, progress: map[string]*stream{},
	}
	b.mu.Lock()
	b.sessions[ss.id] = ss
	b.mu.Unlock()
	go ss.read(stdout)
	return ss, nil
}

func (ss *session) write(line []byte) error {
	ss.lineMu.Lock()
	defer ss.lineMu.Unlock()
	select {
	case <-ss.done:
		return fmt.Errorf("the server has exited")
	default:
	}
	if _, err := ss.stdin.Write(line); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

func (ss *session) register(key, token string, st *stream) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, dup := ss.pending[key]; dup {
		return false
	}
	ss.pending[key] = st
	if token != "" {
		ss.progress[token] = st
	}
	if st.sse {
		ss.open = append(ss.open, st)
		for _, m := range ss.queue {
			st.push(m, false)
		}
		ss.queue = nil
	}
	return true
}

// unregister ends a POST stream: an answer that comes after its client
// went is routed as any other message.
func (ss *session) unregister(key string, st *stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.pending[key] == st {
		delete(ss.pending, key)
	}
	for t, s := range ss.progress {
		if s == st {
			delete(ss.progress, t)
		}
	}
	ss.open = slices.DeleteFunc(ss.open, func(s *stream) bool { return s == st })
	if msgs, _ := st.take(); len(msgs) > 0 {
		ss.b.log.Printf("session %s: %d message(s) not delivered: the client left the POST stream", ss.id, len(msgs))
	}
}

// read routes each line the child writes, in order.
func (ss *session) read(stdout io.Reader) {
	br := bufio.NewReader(stdout)
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			ss.route(line)
		}
		if err != nil {
			break
		}
	}
	ss.lineMu.Lock()
	close(ss.done)
	ss.lineMu.Unlock()
	err := ss.cmd.Wait()
	ss.b.mu.Lock()
	delete(ss.b.sessions, ss.id)
	ss.b.mu.Unlock()
	ss.mu.Lock()
	left := len(ss.queue)
	ss.mu.Unlock()
	ss.b.log.Printf("session %s: server exited (%v); %d message(s) never had a stream", ss.id, exitText(err), left)
	close(ss.exited)
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// route: an answer goes to the POST of its request; progress to the POST
// that carried its token; anything else (the child's requests, its other
// notifications, a line that is not JSON at all) to the oldest POST in
// flight that takes SSE, else the GET stream, else it waits for one.
func (ss *session) route(line []byte) {
	var env envelope
	parsed := json.Unmarshal(line, &env) == nil
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if parsed && env.Method == nil && env.hasID() {
		if st, ok := ss.pending[string(env.ID)]; ok {
			delete(ss.pending, string(env.ID))
			ss.open = slices.DeleteFunc(ss.open, func(s *stream) bool { return s == st })
			st.push(line, true)
			return
		}
	}
	if parsed && env.Method != nil && *env.Method == "notifications/progress" {
		if st, ok := ss.progress[env.progressToken()]; ok && st.sse {
			st.push(line, false)
			return
		}
	}
	switch {
	case len(ss.open) > 0:
		ss.open[0].push(line, false)
	case ss.get != nil:
		ss.get.push(line, false)
	case len(ss.queue) < maxQueued:
		ss.queue = append(ss.queue, line)
	default:
		ss.b.log.Printf("session %s: queue full, a message is lost: %.200s", ss.id, line)
	}
}

// end closes the child's stdin (a stdio server's signal to exit), and
// kills it if it has not gone in 3 s.
func (ss *session) end() {
	ss.b.mu.Lock()
	delete(ss.b.sessions, ss.id)
	ss.b.mu.Unlock()
	ss.lineMu.Lock()
	ss.stdin.Close()
	ss.lineMu.Unlock()
	select {
	case <-ss.exited:
	case <-time.After(3 * time.Second):
		killGroup(ss.cmd)
		<-ss.exited
	}
}

// endAll ends every session (the bridge's shutdown).
func (b *bridge) endAll() {
	b.mu.Lock()
	all := make([]*session, 0, len(b.sessions))
	for _, ss := range b.sessions {
		all = append(all, ss)
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Go(ss.end)
	}
	wg.Wait()
}
