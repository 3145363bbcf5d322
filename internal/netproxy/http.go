package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
)

// The proxy speaks HTTP/1.x with a head reader of its own (head.go), not
// net/http: every dsh-fs process, the supervisor and exec's child, pays
// at its start for what the binary links, and net/http brings TLS, x509
// and HTTP/2 along for the few heads read here.

// The status codes the proxy answers with itself.
const (
	statusBadRequest = 400
	statusForbidden  = 403
	statusBadGateway = 502
)

// statusTexts are the reasons of the status codes the proxy sends.
var statusTexts = map[int]string{
	statusBadRequest: "Bad Request",
	statusForbidden:  "Forbidden",
	statusBadGateway: "Bad Gateway",
}

// hopHeaders are the headers of one hop, in lower case, never passed on;
// along with them, any header a Connection header names.
var hopHeaders = map[string]bool{"connection": true, "proxy-connection": true, "keep-alive": true,
	"proxy-authenticate": true, "proxy-authorization": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true}

// http serves the one HTTP request of c: a CONNECT, or a plain request
// for an absolute http:// URL. One request per connection keeps the allow
// list whole: the proxy reads one head, dials (and so checks) the host it
// names, and never looks for where a body ends, so no framing trick
// (Content-Length against Transfer-Encoding, a pipelined request) makes
// it read a later request for another host; what follows the head
// reaches only the server this request was allowed to reach.
func (p *Proxy) http(c net.Conn, br *bufio.Reader) {
	h, err := readHead(br)
	var he *headError
	if errors.As(err, &he) {
		writeError(c, statusBadRequest, "dsh-fs: the session's proxy: "+err.Error()+"\n")
		return
	}
	if err != nil {
		// The client went away (or its connection failed): nobody to
		// answer.
		return
	}
	method, target, version, err := h.requestLine()
	if err != nil {
		writeError(c, statusBadRequest, "dsh-fs: the session's proxy: "+err.Error()+"\n")
		return
	}
	if method == "CONNECT" {
		p.connect(c, br, target)
		return
	}
	p.forward(c, br, h, method, target, version)
}

// forward passes one plain request to its server, over a connection of
// its own dialled for it: the head in origin form with the URL's Host,
// no hop headers and Connection: close, then the rest of the client's
// bytes as they are; the server's answer comes back with its heads
// rewritten (hop headers dropped, Connection: close) and its body as it
// is. The client's connection ends with the server's.
func (p *Proxy) forward(c net.Conn, br *bufio.Reader, h *head, method, target, version string) {
	// A path with no host (origin form) comes from a client that took
	// the proxy's port for its server's: in the session's own network
	// namespace, the port a direct connection names may be the proxy's.
	// Forwarding it by its Host header would make such a connection
	// work, so it is refused.
	u, err := url.ParseRequestURI(target)
	if err != nil || u.Host == "" {
		writeError(c, statusBadRequest, "dsh-fs: this is the session's proxy: it takes a request for an absolute http:// URL, sent to it as a proxy (HTTP_PROXY)\n")
		return
	}
	if u.Scheme != "http" {
		writeError(c, statusBadRequest, "dsh-fs: the session's proxy forwards http:// requests; use CONNECT for https\n")
		return
	}
	host, port, err := splitPort(u.Host, 80)
	if err != nil {
		writeError(c, statusBadRequest, "dsh-fs: the session's proxy: "+u.Host+": "+err.Error()+"\n")
		return
	}
	up, ok := p.dialFor(c, host, port)
	if !ok {
		return
	}
	defer up.Close()
	var b strings.Builder
	b.WriteString(method + " " + u.RequestURI() + " " + version + "\r\nHost: " + u.Host + "\r\n")
	writeFields(&b, h, "host")
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := io.WriteString(up, b.String()); err != nil {
		writeError(c, statusBadGateway, "dsh-fs: the session's proxy: "+err.Error()+"\n")
		return
	}
	sent := make(chan struct{})
	go func() {
		io.Copy(up, br)
		closeWrite(up)
		close(sent)
	}()
	relay(c, bufio.NewReader(up))
	closeWrite(c)
	c.Close()
	up.Close()
	<-sent
}

// relay passes the server's answer to the client: each interim (1xx)
// head and the final one rewritten, their hop headers dropped and the
// final one saying Connection: close, then the server's bytes as they
// are (the body keeps its own framing, Transfer-Encoding included).
func relay(c net.Conn, ubr *bufio.Reader) {
	for wrote := false; ; wrote = true {
		h, err := readHead(ubr)
		code := 0
		if err == nil {
			code, err = h.statusLine()
		}
		if err != nil {
			if !wrote {
				if err == errHeadEmpty {
					err = errors.New("the server closed the connection without an answer")
				}
				writeError(c, statusBadGateway, "dsh-fs: the session's proxy: "+err.Error()+"\n")
			}
			return
		}
		final := code >= 200 || code == 101
		var b strings.Builder
		b.WriteString(h.start + "\r\n")
		writeFields(&b, h)
		if final {
			b.WriteString("Connection: close\r\n")
		}
		b.WriteString("\r\n")
		if _, err := io.WriteString(c, b.String()); err != nil || final {
			break
		}
	}
	io.Copy(c, ubr)
}

// writeFields writes h's fields to b but the hop headers, the headers
// h's Connection headers name, and those named in drop (lower case).
// Content-Length and Transfer-Encoding always pass: the body that
// follows the head passes unchanged, so its framing must too.
func writeFields(b *strings.Builder, h *head, drop ...string) {
	named := map[string]bool{}
	for _, f := range h.fields {
		if strings.EqualFold(f.name, "Connection") {
			for _, name := range strings.Split(f.value, ",") {
				named[strings.ToLower(strings.TrimSpace(name))] = true
			}
		}
	}
	for _, f := range h.fields {
		name := strings.ToLower(f.name)
		framing := name == "content-length" || name == "transfer-encoding"
		if framing || !hopHeaders[name] && !named[name] && !slices.Contains(drop, name) {
			b.WriteString(f.name + ": " + f.value + "\r\n")
		}
	}
}

// connect serves a CONNECT request: once the proxy reached the
// authority, the client's bytes and the server's pass as they are.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, target string) {
	host, port, err := splitPort(target, 443)
	if err != nil {
		writeError(c, statusBadRequest, "dsh-fs: the session's proxy: CONNECT "+target+": "+err.Error()+"\n")
		return
	}
	up, ok := p.dialFor(c, host, port)
	if !ok {
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	pipe(c, br, up)
}

// dialFor dials host:port for the client c, answering c with the 403
// of a refusal or the 502 of a failure; ok is false then.
func (p *Proxy) dialFor(c net.Conn, host string, port int) (net.Conn, bool) {
	up, err := p.dial(context.Background(), c, host, port)
	if err == nil {
		return up, true
	}
	var r *Refusal
	if errors.As(err, &r) {
		writeError(c, statusForbidden, r.Error()+"\n")
	} else {
		writeError(c, statusBadGateway, "dsh-fs: the session's proxy: "+err.Error()+"\n")
	}
	return nil, false
}

// closeWrite ends c's sending side where c has one (TCP, a unix socket,
// a buffered connection over either).
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

func writeError(w io.Writer, code int, body string) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, statusTexts[code], len(body), body)
}
