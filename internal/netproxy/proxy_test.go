package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// proxyFor serves p on a loopback listener of this test and returns its
// URL.
func proxyFor(t *testing.T, p *Proxy) *url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); p.Handle(c) }()
		}
	}()
	return &url.URL{Scheme: "http", Host: l.Addr().String()}
}

// TestProxyResolvesItself: a name is matched as asked, then resolved by
// the proxy; an address that is internal is refused unless an IP entry
// names it, whatever name led there (a rebinding name, a hosts file).
func TestProxyResolvesItself(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello ", r.Host) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var refused, looked []string
	mk := func(allow ...string) *Proxy {
		p, err := New(allow, func(r *Refusal) { refused = append(refused, r.Host) })
		if err != nil {
			t.Fatal(err)
		}
		p.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			looked = append(looked, host)
			switch host {
			case "rebind.test", "ok.test":
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			case "meta.test":
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			case "empty.test":
				return nil, nil
			}
			return nil, errors.New("no such host")
		}
		return p
	}
	get := func(p *Proxy, target string) (int, string) {
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyFor(t, p))}}
		resp, err := c.Get(target)
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	p := mk("rebind.test", "meta.test", "ok.test", "empty.test", "127.0.0.1:"+port)
	if code, body := get(p, "http://ok.test:"+port+"/"); code != 200 || body != "hello ok.test:"+port {
		t.Errorf("ok.test: %d %q", code, body)
	}
	if code, body := get(p, "http://empty.test/"); code != http.StatusBadGateway || !strings.Contains(body, "empty.test resolves to no address") {
		t.Errorf("empty.test: %d %q", code, body)
	}
	p = mk("rebind.test", "meta.test")
	for _, c := range []struct{ target, says string }{
		{"http://rebind.test:" + port + "/", "refuses rebind.test:" + port + ": it resolves to 127.0.0.1"},
		{"http://meta.test/", "refuses meta.test:80: it resolves to 169.254.169.254"},
		{"http://other.test:" + port + "/", "refuses other.test:" + port + ": not in network_allow"},
		{"http://127.0.0.1:" + port + "/", "refuses 127.0.0.1:" + port + ": not in network_allow"},
	} {
		code, body := get(p, c.target)
		if code != http.StatusForbidden || !strings.Contains(body, c.says) || !strings.Contains(body, "network_allow") {
			t.Errorf("%s: %d %q, want 403 saying %q", c.target, code, body, c.says)
		}
	}
	if want := []string{"rebind.test", "meta.test", "other.test", "127.0.0.1"}; !slices.Equal(refused, want) {
		t.Errorf("refusals told %q, want %q", refused, want)
	}
	// A name no entry allows is never looked up: no lookup carries data.
	if slices.Contains(looked, "other.test") {
		t.Errorf("other.test was looked up: %q", looked)
	}

	// A name no entry allows goes to the approver once; its answer
	// stands for the session. An internal address is never asked about.
	for _, approve := range []bool{true, false} {
		asked := []string{}
		p = mk("127.0.0.1:" + port)
		p.SetApprover(func(host string, port int) error {
			asked = append(asked, fmt.Sprintf("%s:%d", host, port))
			if approve {
				return nil
			}
			return errors.New("not approved: no")
		})
		for range 3 {
			code, body := get(p, "http://ok.test:"+port+"/")
			if approve && code != 200 || !approve && (code != 403 || !strings.Contains(body, "not in network_allow (not approved: no)")) {
				t.Errorf("approve %t: %d %q", approve, code, body)
			}
		}
		if code, _ := get(p, "http://169.254.169.254/"); code != 403 {
			t.Errorf("the metadata address: %d", code)
		}
		if want := []string{"ok.test:" + port}; !slices.Equal(asked, want) {
			t.Errorf("approve %t: asked %q, want %q", approve, asked, want)
		}
	}
}

// TestProxyKeepAlive: a client that keeps its connections alive gets
// every answer, bodies included: the proxy takes one request per client
// connection and says Connection: close, so the client opens the next.
func TestProxyKeepAlive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), b)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, err := New([]string{"127.0.0.1:" + port}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyFor(t, p)), MaxConnsPerHost: 1}}
	for i, want := range []string{"GET /a?x=1 ", "POST /b body", "GET /c "} {
		var resp *http.Response
		var err error
		target := "http://127.0.0.1:" + port + strings.Fields(want)[1]
		if strings.HasPrefix(want, "POST") {
			resp, err = client.Post(target, "text/plain", strings.NewReader("body"))
		} else {
			resp, err = client.Get(target)
		}
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("request %d: %q, want %q", i, b, want)
		}
	}
}

// TestProxyRefusesOriginForm: a request that reaches the proxy as if it
// were the server (a path, not an absolute URL: a client that connected
// to the proxy's port directly) is refused with a 400 that says so, and
// never forwarded by its Host header, even to a host the list allows.
func TestProxyRefusesOriginForm(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello ", r.Host) }))
	defer srv.Close()
	p, err := New([]string{srv.Listener.Addr().String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := proxyFor(t, p)
	resp, err := http.Get("http://" + proxy.Host + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "absolute http:// URL") {
		t.Errorf("an origin-form request: %d %q, want 400 saying the proxy takes absolute URLs", resp.StatusCode, b)
	}
	// The same server through the proxy, as a proxy, is reached.
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	if resp, err := c.Get(srv.URL + "/"); err != nil || resp.StatusCode != 200 {
		t.Errorf("through the proxy: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
