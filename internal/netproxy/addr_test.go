package netproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInternalEmbedded: an IPv6 address that carries an internal IPv4
// address is internal, in every form the proxy knows (addr.go); one that
// carries a public IPv4 address, or none, is not. Before, the proxy
// asked policy.InternalAddr alone, which saw ::127.0.0.1,
// 64:ff9b::7f00:1 and ::ffff:0:7f00:1 as public.
func TestInternalEmbedded(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		internal bool
		form     string
	}{
		{"127.0.0.1", true, "plain IPv4 loopback"},
		{"8.8.8.8", false, "plain public IPv4"},
		{"::1", true, "IPv6 loopback"},
		{"2606:4700::1111", false, "plain public IPv6"},
		{"::ffff:127.0.0.1", true, "IPv4-mapped"},
		{"::ffff:169.254.169.254", true, "IPv4-mapped metadata"},
		{"::ffff:8.8.8.8", false, "IPv4-mapped public"},
		{"::127.0.0.1", true, "IPv4-compatible"},
		{"::10.1.2.3", true, "IPv4-compatible private"},
		{"::8.8.8.8", false, "IPv4-compatible public"},
		{"::ffff:0:127.0.0.1", true, "SIIT"},
		{"::ffff:0:192.168.1.1", true, "SIIT private"},
		{"::ffff:0:8.8.8.8", false, "SIIT public"},
		{"64:ff9b::7f00:1", true, "NAT64 well-known loopback"},
		{"64:ff9b::a9fe:a9fe", true, "NAT64 well-known metadata"},
		{"64:ff9b::100.64.0.1", true, "NAT64 well-known CGNAT"},
		{"64:ff9b::808:808", false, "NAT64 well-known public"},
		{"64:ff9b:1::808:808", true, "NAT64 local-use, whatever it carries"},
		{"64:ff9b:1:7f00:1::", true, "NAT64 local-use /48 loopback"},
		{"2002:7f00:1::1", true, "6to4 loopback relay"},
		{"2002:a00:1::1", true, "6to4 private relay"},
		{"2002:808:808::1", false, "6to4 public relay"},
		{"2001:0:7f00:1::1", true, "Teredo loopback server"},
		// Client 127.0.0.1 inverted is 80ff:fffe.
		{"2001:0:808:808:0:0:80ff:fffe", true, "Teredo loopback client"},
		{"2001:0:808:808:0:0:f7f7:f7f7", false, "Teredo public server and client (8.8.8.8)"},
		{"2001:db8::1", false, "documentation, no IPv4 inside"},
	} {
		if got := internalAddr(netip.MustParseAddr(tc.addr)); got != tc.internal {
			t.Errorf("%s (%s): internal %v, want %v", tc.addr, tc.form, got, tc.internal)
		}
	}
}

// embeddedLoopback are IPv6 forms of 127.0.0.1 a test can give the
// loopback device of a network namespace of its own and serve on.
var embeddedLoopback = []string{"::7f00:1", "::ffff:0:7f00:1", "64:ff9b::7f00:1", "64:ff9b:1::7f00:1", "2002:7f00:1::1", "2001:0:808:808::80ff:fffe"}

// TestProxyRefusesEmbeddedLoopback: through the proxy, on loopback, in a
// network namespace of the test's own where each IPv6 form of 127.0.0.1
// is an address of lo with a server behind it: a name that resolves to
// it is refused with a 403, and so is the literal, which no approver is
// asked about. Before, the proxy dialled them and the server answered
// (200, "inside").
func TestProxyRefusesEmbeddedLoopback(t *testing.T) {
	if os.Getenv("DSHFS_TEST_NETNS_CHILD") == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make a network namespace and give its lo addresses")
		}
		for _, tool := range []string{"unshare", "ip"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("no %s here", tool)
			}
		}
		c := exec.Command("unshare", "-n", os.Args[0], "-test.run=^TestProxyRefusesEmbeddedLoopback$", "-test.count=1")
		c.Env = append(os.Environ(), "DSHFS_TEST_NETNS_CHILD=1")
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("in a network namespace: %v\n%s", err, out)
		}
		return
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	for _, a := range embeddedLoopback {
		if out, err := exec.Command("ip", "-6", "addr", "add", a+"/128", "dev", "lo", "nodad").CombinedOutput(); err != nil {
			t.Fatalf("ip addr add %s: %v %s", a, err, out)
		}
	}
	for _, a := range embeddedLoopback {
		t.Run(a, func(t *testing.T) {
			l, err := net.Listen("tcp6", "["+a+"]:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "inside") })}
			go srv.Serve(l)
			defer srv.Close()
			port := l.Addr().(*net.TCPAddr).Port
			p, err := New([]string{"v6.test"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.lookup = func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr(a)}, nil }
			asked := 0
			p.SetApprover(func(string, int) error { asked++; return nil })
			c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyFor(t, p))}}
			for _, target := range []string{fmt.Sprintf("http://v6.test:%d/", port), fmt.Sprintf("http://[%s]:%d/", a, port)} {
				resp, err := c.Get(target)
				if err != nil {
					t.Fatalf("GET %s: %v", target, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "network_allow") {
					t.Errorf("GET %s through the proxy: %d %q, want 403 naming network_allow", target, resp.StatusCode, body)
				}
			}
			if asked != 0 {
				t.Errorf("the approver was asked %d times about an internal address", asked)
			}
		})
	}
}
