// Package netproxy is the network of a dsh-fs exec session under
// network: allowlist (docs/design.md §10): a proxy for HTTP, HTTPS
// (CONNECT) and SOCKS5, run by the supervisor outside the sandbox, and
// the bridge inside the session's network namespace that hands it every
// connection made to the session's loopback port, over a unix socket.
//
// The proxy matches the name the client asked for (the CONNECT
// authority, the request's host, the SOCKS name) against network_allow,
// resolves it itself, and connects to an address that is loopback,
// private or link-local only when an entry names that address: a name
// that resolves there (DNS rebinding, a hosts file) reaches nothing.
package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// Setting is what a refusal tells the client to change.
const Setting = "network_allow"

// dialTimeout bounds one connection the proxy makes.
const dialTimeout = 15 * time.Second

// Refusal is a connection the proxy refused: the host and port the
// client asked for, and why.
type Refusal struct {
	Host string
	Port int
	Why  string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("dsh-fs: the session's network refuses %s: %s; the trusted setting %s names the hosts a session may reach",
		net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), r.Why, Setting)
}

// Proxy is a session's proxy.
type Proxy struct {
	allow policy.NetworkAllow
	// refused is told of every refusal, for the session's log.
	refused func(*Refusal)
	// approve, when not nil, is asked about a name no entry allows: nil
	// approves it for the rest of the session; an error is the
	// refusal's reason. answers holds each host:port's answer ("" when
	// approved); askMu puts one question at a time, so a burst of
	// connections to one host asks once.
	approve func(host string, port int) error
	askMu   sync.Mutex
	answers map[string]string
	// lookup resolves a name; net.DefaultResolver's by default.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// upstream, when not nil, is the proxy allowed hosts are reached
	// through (SetUpstream).
	upstream *Upstream
	// decided is told of every decision (OnDecision).
	decided func(Decision)
	// grants are network_allow_commands' grants, and peer the programs
	// of the processes that hold a client's connection (SetGrants).
	grants []Grant
	peer   func(net.Conn) ([][]FileID, error)

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
	wg    sync.WaitGroup
}

// New is the proxy of the allow list allow (network_allow's entries),
// telling refused of each refusal.
func New(allow []string, refused func(*Refusal)) (*Proxy, error) {
	a, err := policy.ParseNetworkAllow(allow)
	if err != nil {
		return nil, err
	}
	if refused == nil {
		refused = func(*Refusal) {}
	}
	return &Proxy{allow: a, refused: refused, conns: map[net.Conn]struct{}{}, answers: map[string]string{},
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}, nil
}

// dial connects to host:port as the allow list allows, or returns a
// *Refusal, for the client connection client (nil when there is
// none to ask about): a host network_allow does not name is reached
// when a grant covers every process holding client (SetGrants), else
// when the approver approves it.
func (p *Proxy) dial(ctx context.Context, client net.Conn, host string, port int) (net.Conn, error) {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	d := Decision{Host: host, Port: port, Verdict: VerdictAllowed, Rule: Setting}
	refuse := func(why string) error {
		r := &Refusal{Host: host, Port: port, Why: why}
		p.refused(r)
		d.Verdict, d.Rule = VerdictRefused, why
		p.decide(d)
		return r
	}
	if host == "" || port < 1 || port > 65535 {
		return nil, refuse("no host and port to connect to")
	}
	literal, err := netip.ParseAddr(host)
	// An internal address is opened by an IP entry alone: no approval
	// could connect to it, so none is asked for.
	askable := err != nil || !internalAddr(literal)
	if e, err := policy.ParseNetworkEntry(host); err != nil || e.Wildcard || e.Port != 0 {
		// Not a host name or an address: nothing to put to a person.
		askable = false
	}
	allowAddr := p.allow.AllowsAddr
	if !p.allow.AllowsName(host, port) {
		if g := p.granted(client, host, port); g != nil {
			d.Rule, d.Command, allowAddr = SettingCommands, g.Command, func(a netip.Addr, port int) bool {
				return p.allow.AllowsAddr(a, port) || g.Allow.AllowsAddr(a, port)
			}
		} else if !askable {
			return nil, refuse("not in " + Setting)
		} else if ok, why := p.ask(host, port); !ok {
			return nil, refuse("not in " + Setting + why)
		} else {
			d.Verdict, d.Rule = VerdictApproved, SettingApproval
		}
	}
	var addrs []netip.Addr
	if literal.IsValid() {
		addrs = []netip.Addr{literal}
	} else {
		if addrs, err = p.lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("dsh-fs: the session's proxy cannot resolve %s: %w", host, err)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("dsh-fs: the session's proxy: %s resolves to no address", host)
	}
	// Each address that passes is tried in turn, as a client would; the
	// one dialled is the one checked, never the name again.
	var internal []string
	var dialErr error
	for _, a := range addrs {
		a = a.Unmap()
		if internalAddr(a) && !allowAddr(a, port) {
			internal = append(internal, a.String())
			continue
		}
		c, via, err := p.open(ctx, host, netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			d.Via, d.Addr = via, a.String()
			p.decide(d)
			if d.Rule == SettingCommands {
				c = p.watchGrant(client, c, host, port)
			}
			return c, nil
		}
		dialErr = err
	}
	if dialErr != nil {
		return nil, dialErr
	}
	return nil, refuse("it resolves to " + strings.Join(internal, ", ") +
		", a loopback, private or link-local address that no " + Setting + " entry names")
}

// open connects to target, the address checked for host: through the
// upstream unless there is none or NO_PROXY names host, directly
// otherwise. via says which, for the decision.
func (p *Proxy) open(ctx context.Context, host string, target netip.AddrPort) (net.Conn, string, error) {
	if u := p.upstream; u != nil && !u.direct(host, int(target.Port())) {
		c, err := u.connect(ctx, target)
		return c, "upstream " + u.addr, err
	}
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", target.String())
	return c, "direct", err
}

// SetUpstream makes the proxy reach every host through u, but those its
// NO_PROXY names (docs/design.md §10, upstream). The allow list, the
// approver and the address checks decide first: a refused host is never
// put to u.
func (p *Proxy) SetUpstream(u *Upstream) { p.upstream = u }

// SetApprover makes approve decide about each name no entry allows, once
// for the session (docs/design.md §10: approval command or supervisor).
func (p *Proxy) SetApprover(approve func(host string, port int) error) { p.approve = approve }

// ask reports whether host:port was approved for this session, now or
// before, and otherwise why not (the refusal's tail, "" with no
// approver). A host refused once is not asked about again.
func (p *Proxy) ask(host string, port int) (bool, string) {
	if p.approve == nil {
		return false, ""
	}
	key := net.JoinHostPort(strings.ToLower(host), strconv.Itoa(port))
	p.askMu.Lock()
	defer p.askMu.Unlock()
	if why, done := p.answers[key]; done {
		return why == "", why
	}
	why := ""
	if err := p.approve(host, port); err != nil {
		why = " (" + err.Error() + ")"
	}
	p.answers[key] = why
	return why == "", why
}

// Serve serves every connection l accepts until l fails or Close is
// called: the session's proxy where the session has no network
// namespace of its own (macOS), and its clients reach the proxy's
// loopback listener directly. The caller closes l.
func (p *Proxy) Serve(l net.Listener) {
	p.wg.Add(1)
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of descriptors, a connection reset before it was
			// accepted: the next one may be served.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !p.serve(c) {
			return
		}
	}
}

// serve handles c on a goroutine of its own, tracked until it ends; it
// closes c and returns false once the proxy is closing.
func (p *Proxy) serve(c net.Conn) bool {
	if !p.track(c) {
		c.Close()
		return false
	}
	go func() {
		defer p.untrack(c)
		p.Handle(c)
	}()
	return true
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.wg.Done()
}

// Close ends every connection the proxy serves.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.done = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

// Handle serves one client connection: SOCKS5 when its first byte is 5,
// HTTP (plain requests and CONNECT) otherwise.
func (p *Proxy) Handle(c net.Conn) {
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		p.socks(c, br)
		return
	}
	p.http(c, br)
}

// pipe copies between the client (reading through br, which may hold
// bytes already read) and the server until either side ends.
func pipe(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(up, br)
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(c, up)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// splitPort splits host[:port], the port def when there is none.
func splitPort(hostport string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.Trim(hostport, "[]"), def, nil
		}
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", ps)
	}
	return host, port, nil
}
