package netproxy

import (
	"net"
	"net/http"
	"net/url"
	"testing"
)

// TestServe: the proxy served from a listener of its own (a session with
// no network namespace, macOS) answers what it accepts by its rules, a
// name not on its list refused, and Serve returns once the listener is
// closed.
func TestServe(t *testing.T) {
	var refused []string
	p, err := New([]string{"allowed.test"}, func(r *Refusal) { refused = append(refused, r.Host) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); p.Serve(l) }()
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: l.Addr().String()})}}
	resp, err := c.Get("http://refused.test/")
	if err != nil {
		t.Fatalf("GET through Serve: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(refused) != 1 || refused[0] != "refused.test" {
		t.Fatalf("status %d, refused %q: want 403 and refused.test", resp.StatusCode, refused)
	}
	l.Close()
	<-done
}
