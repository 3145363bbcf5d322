package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// TestUpstreamChain: with an upstream, an allowed host is reached
// through it, the CONNECT naming the checked address and carrying the
// credentials; a refused host never reaches it; an upstream's refusal
// reaches the client as a 502 with its status alone, never its body
// (which echoes the credentials); every decision is told once.
func TestUpstreamChain(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello ", r.Host) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var mu sync.Mutex
	var log []string
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				mu.Lock()
				log = append(log, req.RequestURI+" "+req.Header.Get("Proxy-Authorization"))
				mu.Unlock()
				up, err := net.Dial("tcp", req.RequestURI)
				if err != nil || !strings.HasSuffix(req.RequestURI, ":"+port) {
					body := "no (" + req.Header.Get("Proxy-Authorization") + ")"
					fmt.Fprintf(c, "HTTP/1.1 403 Forbidden %s\r\nContent-Length: %d\r\n\r\n%s", body, len(body), body)
					return
				}
				defer up.Close()
				io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
				go io.Copy(up, br)
				io.Copy(c, up)
			}()
		}
	}()
	p, err := New([]string{"127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	up, err := ParseUpstream("http://alice:pw-secret@"+ul.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	// Loopback is never proxied by NO_PROXY's rules (as Go's own
	// clients): here the only address the test has is loopback's.
	up.direct = func(string, int) bool { return false }
	p.SetUpstream(up)
	var decisions []Decision
	p.OnDecision(func(d Decision) { mu.Lock(); decisions = append(decisions, d); mu.Unlock() })
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyFor(t, p))}}
	get := func(u string) string {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	if got := get("http://127.0.0.1:" + port + "/"); got != "200 hello 127.0.0.1:"+port {
		t.Errorf("allowed: %q", got)
	}
	if got := get("http://evil.test:" + port + "/"); !strings.HasPrefix(got, "403 ") {
		t.Errorf("refused: %q", got)
	}
	got := get("http://127.0.0.1:1/")
	if !strings.HasPrefix(got, "502 ") || !strings.Contains(got, "answered 403 to CONNECT 127.0.0.1:1") || strings.Contains(got, "pw-secret") || strings.Contains(got, "YWxpY2U6") {
		t.Errorf("the upstream's refusal: %q, want a 502 saying its status, without its credentials", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"127.0.0.1:" + port + " Basic YWxpY2U6cHctc2VjcmV0", "127.0.0.1:1 Basic YWxpY2U6cHctc2VjcmV0"}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("the upstream was asked:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if len(decisions) != 2 || decisions[0].Verdict != VerdictAllowed || decisions[0].Via != "upstream "+ul.Addr().String() ||
		decisions[1].Verdict != VerdictRefused || decisions[1].Host != "evil.test" {
		t.Errorf("decisions: %+v", decisions)
	}
}

// TestUpstreamFromEnv: HTTPS_PROXY before HTTP_PROXY, upper case before
// lower; NO_PROXY names hosts dialled directly; a bad URL's error never
// quotes it.
func TestUpstreamFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	u, err := UpstreamFromEnv(env(map[string]string{"http_proxy": "http://h:1", "HTTPS_PROXY": "http://s:2", "https_proxy": "http://l:3", "NO_PROXY": ".corp.test,10.0.0.0/8"}))
	if err != nil || u.addr != "s:2" {
		t.Fatalf("%v %v, want s:2", u, err)
	}
	for host, direct := range map[string]bool{"a.corp.test": true, "10.1.2.3": true, "example.com": false, "127.0.0.1": true} {
		if u.direct(host, 443) != direct {
			t.Errorf("%s: direct %v, want %v", host, !direct, direct)
		}
	}
	if u, err := UpstreamFromEnv(env(map[string]string{"http_proxy": "proxy:8080"})); err != nil || u.addr != "proxy:8080" {
		t.Errorf("a bare host:port: %v %v", u, err)
	}
	if u, err := UpstreamFromEnv(env(nil)); u != nil || err != nil {
		t.Errorf("no proxy: %v %v", u, err)
	}
	if _, err := UpstreamFromEnv(env(map[string]string{"HTTPS_PROXY": "socks5://alice:pw-secret@h:1"})); err == nil || strings.Contains(err.Error(), "pw-secret") {
		t.Errorf("a socks upstream: %v", err)
	}
}

// TestUpstreamAnswer: the upstream's answer to CONNECT is read as far as
// its head, a 200 alone opens the tunnel, bytes sent after the head are
// the tunnel's first, and no error quotes what the upstream sent (it may
// echo the credentials).
func TestUpstreamAnswer(t *testing.T) {
	const secret = "c2VjcmV0"
	for _, tc := range []struct{ name, answer, err, first string }{
		{"ok", "HTTP/1.1 200 Connection established\r\nVia: x\r\n\r\n", "", ""},
		{"bytes after the head", "HTTP/1.0 200 OK\r\n\r\nEARLY", "", "EARLY"},
		{"refused", "HTTP/1.1 407 Basic " + secret + "\r\nContent-Length: 8\r\n\r\n" + secret, "answered 407 to CONNECT 192.0.2.1:443", ""},
		{"a control byte", "HTTP/1.1 200 OK\r\nX-Echo: Basic " + secret + "\x01\r\n\r\n", "malformed message head", ""},
		{"not HTTP", "SSH-2.0 " + secret + "\r\n\r\n", "malformed message head", ""},
		{"no answer", "", "closed the connection without an answer", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, tc.answer)
			}()
			u := &Upstream{addr: l.Addr().String(), auth: "Basic " + secret}
			c, err := u.connect(t.Context(), netip.MustParseAddrPort("192.0.2.1:443"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), secret) {
					t.Fatalf("%v, want an error saying %q without the upstream's bytes", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.first != "" {
				b := make([]byte, len(tc.first))
				if _, err := io.ReadFull(c, b); err != nil || string(b) != tc.first {
					t.Errorf("the tunnel's first bytes: %q %v, want %q", b, err, tc.first)
				}
			}
		})
	}
}
