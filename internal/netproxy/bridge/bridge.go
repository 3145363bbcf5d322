// Package bridge is the session's end of the network under `network:
// allowlist`: a loopback listener inside the session's network namespace
// whose connections travel, as descriptors, over a channel to the
// supervisor's proxy (internal/netproxy). It is mechanism alone: no
// policy, so the session's child can run it.
package bridge

import (
	"fmt"
	"net"
	"strings"
)

// Listen is the bridge's listener: 127.0.0.1 of the session's network
// namespace, on a port the kernel picks.
func Listen() (*net.TCPListener, error) {
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("proxy bridge: %w", err)
	}
	return l, nil
}

// proxyVars are the proxy variables a client reads, each also in lower
// case.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY"}

// WithoutProxyVars is env without any proxy variable: what a session
// with a network namespace of its own gets of exec's environment, whose
// proxy (credentials included) only the supervisor uses.
func WithoutProxyVars(env []string) []string {
	drop := map[string]bool{}
	for _, n := range proxyVars {
		drop[n] = true
		drop[strings.ToLower(n)] = true
	}
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}

// Env is CMD's environment env with the proxy at 127.0.0.1:port: every
// proxy variable a client reads, in both spellings, replaced, and
// loopback left direct.
func Env(env []string, port int) []string {
	out := WithoutProxyVars(env)
	http := fmt.Sprintf("http://127.0.0.1:%d", port)
	socks := fmt.Sprintf("socks5h://127.0.0.1:%d", port)
	for _, v := range [][2]string{{"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"ALL_PROXY", socks}, {"NO_PROXY", "localhost,127.0.0.1"}} {
		out = append(out, v[0]+"="+v[1], strings.ToLower(v[0])+"="+v[1])
	}
	return out
}
