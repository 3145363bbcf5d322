package policy

import (
	"net/netip"
	"testing"
)

func TestNetworkAllow(t *testing.T) {
	a, err := ParseNetworkAllow([]string{"example.com", "*.example.org", "api.test:443", "10.0.0.5", "[::1]:8080", "EXAMPLE.net"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"example.com", 80, true},
		{"Example.COM.", 443, true},
		{"www.example.com", 80, false},
		{"a.example.org", 80, true},
		{"a.b.example.org", 80, true},
		{"example.org", 80, false},
		{"evilexample.org", 80, false},
		{"api.test", 443, true},
		{"api.test", 80, false},
		{"10.0.0.5", 22, true},
		{"10.0.0.6", 22, false},
		{"[::1]", 8080, true},
		{"::1", 8081, false},
		{"example.net", 1, true},
		{"169.254.169.254", 80, false},
	} {
		if got := a.AllowsName(c.host, c.port); got != c.want {
			t.Errorf("%s:%d allowed %t, want %t", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", "exa mple.com", "a..b", "-a.com", "a.com:0", "a.com:70000", "a.com:x", "*.", "http://a.com"} {
		if _, err := ParseNetworkEntry(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestInternalAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "fd00::1": true, "0.0.0.0": true, "::": true, "100.64.0.1": true,
		"::ffff:127.0.0.1": true, "224.0.0.1": true,
		"93.184.216.34": false, "2606:2800:220:1::1": false, "8.8.8.8": false,
	} {
		if got := InternalAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("%s internal %t, want %t", s, got, want)
		}
	}
}
