package netproxy

import "net/netip"

// OnAllowed makes allowed be told of every connection the proxy makes:
// the host and port the client asked for, and the address it dialled
// (for the session's audit log, docs/design.md §10). It decides nothing.
func (p *Proxy) OnAllowed(allowed func(host string, port int, addr netip.Addr)) { p.allowed = allowed }

func (p *Proxy) noteAllowed(host string, port int, addr netip.Addr) {
	if p.allowed != nil {
		p.allowed(host, port, addr)
	}
}
