package netproxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Upstream is the proxy the session's proxy reaches hosts through
// (docs/design.md §10, upstream): an http:// proxy, asked with CONNECT
// for every scheme, naming the address the session's proxy checked,
// never the name again. Its credentials are sent to it alone: never in
// a reply or an error text the session sees.
type Upstream struct {
	// addr is the upstream's host:port.
	addr string
	// auth is the Proxy-Authorization value, "" without credentials.
	auth string
	// direct reports whether a host NO_PROXY names is dialled directly.
	direct func(host string, port int) bool
}

// ParseUpstream is the upstream proxy rawURL (http://[user:pass@]host[:port])
// with the NO_PROXY list noProxy (comma-separated, as curl and Go read
// it). Its errors never quote the URL: it may hold a password.
func ParseUpstream(rawURL, noProxy string) (*Upstream, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		if !strings.Contains(rawURL, "://") {
			// HTTPS_PROXY=proxy:3128, as curl takes it.
			u, err = url.Parse("http://" + rawURL)
		}
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("the upstream proxy is not a URL (want http://HOST:PORT)")
		}
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("the upstream proxy's scheme is %q: only an http:// upstream is asked (with CONNECT, whatever the client's scheme)", u.Scheme)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, fmt.Errorf("the upstream proxy's URL has a path or a query: want http://HOST:PORT")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	up := &Upstream{addr: net.JoinHostPort(u.Hostname(), port)}
	if u.User != nil {
		pass, _ := u.User.Password()
		up.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	// x/net's matcher is the one Go's own clients use for NO_PROXY:
	// names, suffixes (.example.com), addresses and CIDRs, ports.
	match := (&httpproxy.Config{HTTPSProxy: "http://upstream.invalid", NoProxy: noProxy}).ProxyFunc()
	up.direct = func(host string, port int) bool {
		p, err := match(&url.URL{Scheme: "https", Host: net.JoinHostPort(host, fmt.Sprint(port))})
		return err == nil && p == nil
	}
	return up, nil
}

// WithCredentials sets the upstream's credentials (user:password, as a
// trusted file holds them), replacing any the URL carried.
func (u *Upstream) WithCredentials(userPass string) {
	u.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(strings.TrimSpace(userPass)))
}

// UpstreamFromEnv is the upstream exec's own environment names, read by
// lookup: HTTPS_PROXY, else HTTP_PROXY (each upper case, then lower),
// and NO_PROXY; nil when neither names one. It is only ever given the
// environment of the trusted side (exec's, at the top of a session).
func UpstreamFromEnv(lookup func(string) (string, bool)) (*Upstream, error) {
	get := func(name string) string {
		for _, n := range []string{name, strings.ToLower(name)} {
			if v, ok := lookup(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	raw := get("HTTPS_PROXY")
	if raw == "" {
		raw = get("HTTP_PROXY")
	}
	if raw == "" {
		return nil, nil
	}
	return ParseUpstream(raw, get("NO_PROXY"))
}

// connect opens a tunnel to target through the upstream.
func (u *Upstream) connect(ctx context.Context, target netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", u.addr)
	if err != nil {
		return nil, fmt.Errorf("the upstream proxy %s: %w", u.addr, err)
	}
	c.SetDeadline(time.Now().Add(dialTimeout))
	req := "CONNECT " + target.String() + " HTTP/1.1\r\nHost: " + target.String() + "\r\n"
	if u.auth != "" {
		req += "Proxy-Authorization: " + u.auth + "\r\n"
	}
	br := bufio.NewReader(c)
	code := 0
	var h *head
	if _, err = c.Write([]byte(req + "\r\n")); err == nil {
		// The answer's head alone: a 200 to CONNECT has no body, and
		// what follows it is the tunnel's.
		if h, err = readHead(br); err == nil {
			code, err = h.statusLine()
		} else if err == errHeadEmpty {
			err = errors.New("it closed the connection without an answer")
		}
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the upstream proxy %s: %w", u.addr, err)
	}
	if code != 200 {
		c.Close()
		// The status code alone: the upstream's body or reason may echo
		// what it was sent, the credentials included.
		return nil, fmt.Errorf("the upstream proxy %s answered %d to CONNECT %s", u.addr, code, target)
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *bufferedConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
