package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a server on 127.0.0.1 that records each request's head
// as it arrived and its body as net/http decodes it, and answers each.
// A careless one serves every request a connection carries until the
// client's side ends, ignoring Connection: close.
type rawServer struct {
	addr     string
	careless bool
	accepts  atomic.Int32
	mu       sync.Mutex
	heads    []string
	bodies   []string
}

func newRawServer(t *testing.T, answer string, careless bool) *rawServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &rawServer{addr: l.Addr().String(), careless: careless}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			go s.serve(c, answer)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn, answer string) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		var head bytes.Buffer
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" || line == "\n" {
				break
			}
		}
		req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(bytes.NewReader(head.Bytes()), br)))
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		s.heads = append(s.heads, head.String())
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if _, err := io.WriteString(c, answer); err != nil || req.Close && !s.careless {
			return
		}
	}
}

func (s *rawServer) seen() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heads...), append([]string(nil), s.bodies...)
}

// exchange sends in on a connection of its own to p and returns all p
// sends back until it ends the connection (the client's side ends once
// in is written, so a careless server's connection ends); it waits until p's handler
// returned, so nothing p dials afterwards goes unseen.
func exchange(t *testing.T, p *Proxy, in string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		p.Handle(c)
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, in); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer: %v (got %q)", err, out)
	}
	c.Close()
	<-done
	return string(out)
}

// TestForward: a plain request reaches its server in origin form, with
// the URL's Host, without the hop headers (nor those its Connection
// header names), saying Connection: close, its body whole whatever its
// framing; the answer comes back with its hop headers dropped, saying
// Connection: close, its body as the server framed it.
func TestForward(t *testing.T) {
	const answer = "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: 2\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
	srv := newRawServer(t, answer, true)
	p, err := New([]string{srv.addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, in, head, body string }{
		{"content-length",
			"POST http://" + srv.addr + "/p?q=1 HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n" +
				"Connection: keep-alive, X-Secret\r\nX-Secret: s\r\nProxy-Connection: keep-alive\r\nKeep-Alive: 300\r\nTe: trailers\r\n" +
				"Upgrade: h2c\r\nX-Kept: k\r\nContent-Length: 5\r\n\r\nhello",
			"POST /p?q=1 HTTP/1.1\r\nHost: " + srv.addr + "\r\nX-Kept: k\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", "hello"},
		{"chunked",
			"PUT http://" + srv.addr + "/c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding\r\n\r\n" +
				"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
			"PUT /c HTTP/1.1\r\nHost: " + srv.addr + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n", "hello world"},
		{"no path",
			"GET http://" + srv.addr + "?x HTTP/1.0\n\n",
			"GET /?x HTTP/1.0\r\nHost: " + srv.addr + "\r\nConnection: close\r\n\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := srv.seen()
			out := exchange(t, p, tc.in)
			heads, bodies := srv.seen()
			if len(heads) != len(before)+1 {
				t.Fatalf("the server saw %d requests, want one: %q", len(heads)-len(before), heads[len(before):])
			}
			if got := heads[len(heads)-1]; got != tc.head {
				t.Errorf("the server got the head\n%q\nwant\n%q", got, tc.head)
			}
			if got := bodies[len(bodies)-1]; got != tc.body {
				t.Errorf("the server got the body %q, want %q", got, tc.body)
			}
			want := "HTTP/1.1 200 OK\r\nX-Kept: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
			if out != want {
				t.Errorf("the client got\n%q\nwant\n%q", out, want)
			}
		})
	}

	// An interim answer passes before the final one, each rewritten.
	cont := newRawServer(t, "HTTP/1.1 100 Continue\r\nX-Hop: 1\r\nConnection: X-Hop\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false)
	p, err = New([]string{cont.addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := exchange(t, p, "GET http://"+cont.addr+"/ HTTP/1.1\r\n\r\n")
	if want := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"; out != want {
		t.Errorf("an interim answer: %q, want %q", out, want)
	}
	// A server that answers what is not HTTP/1.x is a 502.
	junk := newRawServer(t, "SSH-2.0-OpenSSH\r\n\r\n", false)
	p, err = New([]string{junk.addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := exchange(t, p, "GET http://"+junk.addr+"/ HTTP/1.1\r\n\r\n"); !strings.HasPrefix(out, "HTTP/1.1 502 Bad Gateway\r\n") {
		t.Errorf("a server that does not speak HTTP: %q, want a 502", out)
	}
}

// TestForwardOneRequestPerConnection: the server's connection was
// dialled, and so checked, for the first request's host alone; nothing
// the client sends after that head reaches another host, however it is
// framed: a second request pipelined behind the first, one hidden behind
// a Content-Length the server ignores for Transfer-Encoding, one sent
// after the first answer. The first server may see those bytes (it was
// allowed); the second sees no connection at all.
func TestForwardOneRequestPerConnection(t *testing.T) {
	a := newRawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", true)
	b := newRawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb", true)
	p, err := New([]string{a.addr, b.addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	second := "GET http://" + b.addr + "/ HTTP/1.1\r\nHost: " + b.addr + "\r\n\r\n"
	for _, tc := range []struct{ name, in string }{
		{"pipelined", "GET http://" + a.addr + "/ HTTP/1.1\r\n\r\n" + second},
		{"smuggled", "POST http://" + a.addr + "/ HTTP/1.1\r\nContent-Length: " + fmt.Sprint(len(second)+5) +
			"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + second},
		{"absolute second", "GET http://" + a.addr + "/ HTTP/1.1\r\n\r\nGET http://" + b.addr + "/ HTTP/1.1\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := exchange(t, p, tc.in)
			if !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || strings.HasSuffix(out, "b") {
				t.Errorf("the client got %q, want the first server's answer alone", out)
			}
			if n := b.accepts.Load(); n != 0 {
				t.Fatalf("the second host saw %d connections", n)
			}
		})
	}
	// After the first answer the client's connection ends: a request
	// written then reaches nobody.
	a = newRawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", false)
	if p, err = New([]string{a.addr, b.addr}, nil); err != nil {
		t.Fatal(err)
	}
	c, server := net.Pipe()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	done := make(chan struct{})
	go func() { defer close(done); defer server.Close(); p.Handle(server) }()
	go io.WriteString(c, "GET http://"+a.addr+"/ HTTP/1.1\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if !resp.Close {
		t.Errorf("the answer does not say Connection: close")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy still holds the client's connection 10 s after the answer")
	}
	if _, err := io.WriteString(c, second); err == nil {
		t.Errorf("a second request was taken after the first answer")
	}
	c.Close()
	if n := b.accepts.Load(); n != 0 {
		t.Fatalf("the second host saw %d connections", n)
	}
}
