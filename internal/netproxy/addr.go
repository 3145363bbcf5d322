package netproxy

import (
	"net/netip"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// An IPv6 address can carry an IPv4 address inside it, and a translator,
// a tunnel or the kernel then reaches that IPv4 host: ::ffff:127.0.0.1
// is 127.0.0.1. The proxy refuses an IPv6 address whose embedded IPv4
// address is internal as it refuses the IPv4 address itself
// (internalAddr). In scope, each by its fixed place in the address:
//
//   - IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96 (deprecated,
//     RFC 4291): the low 32 bits.
//   - SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 2765): the low 32 bits.
//   - NAT64's well-known prefix 64:ff9b::/96 (RFC 6052): the low 32 bits.
//   - NAT64's local-use prefix 64:ff9b:1::/48 (RFC 8215): internal as a
//     whole. Its operator picks the prefix length (/48 to /96), which
//     moves the IPv4 address inside it, and no public host lives there.
//   - 6to4 2002::/16 (RFC 3056): bits 16 to 47, the relay's IPv4 tunnel
//     end.
//   - Teredo 2001::/32 (RFC 4380): the server's IPv4 address (bits 32 to
//     63) and the client's (the low 32 bits, each bit inverted).
//
// Out of scope: a network-specific NAT64 prefix (RFC 6052 §2.2), which
// only the network's operator knows, and ISATAP interface identifiers
// (::5efe:a.b.c.d under any prefix), which name a host's own tunnel
// address, not a place to be translated to. Both are documented in
// docs/design.md §10.

var (
	prefixMapped       = netip.MustParsePrefix("::ffff:0:0/96")
	prefixCompatible   = netip.MustParsePrefix("::/96")
	prefixSIIT         = netip.MustParsePrefix("::ffff:0:0:0/96")
	prefixNAT64        = netip.MustParsePrefix("64:ff9b::/96")
	prefixNAT64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	prefix6to4         = netip.MustParsePrefix("2002::/16")
	prefixTeredo       = netip.MustParsePrefix("2001::/32")
	embeddedEverywhere = []netip.Prefix{prefixMapped, prefixCompatible, prefixSIIT, prefixNAT64}
)

// embeddedIPv4 returns the IPv4 addresses that a's form carries (none
// for a plain IPv6 address or an IPv4 one), and whether a is internal
// as a whole by its prefix.
func embeddedIPv4(a netip.Addr) (v4 []netip.Addr, internal bool) {
	if !a.Is6() {
		return nil, false
	}
	b := a.As16()
	at := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	for _, p := range embeddedEverywhere {
		if p.Contains(a) {
			return []netip.Addr{at(12)}, false
		}
	}
	switch {
	case prefixNAT64Local.Contains(a):
		return nil, true
	case prefix6to4.Contains(a):
		return []netip.Addr{at(2)}, false
	case prefixTeredo.Contains(a):
		client := at(12).As4()
		for i := range client {
			client[i] ^= 0xff
		}
		return []netip.Addr{at(4), netip.AddrFrom4(client)}, false
	}
	return nil, false
}

// internalAddr reports whether a is internal (policy.InternalAddr), or
// an IPv6 address that carries an internal IPv4 address, or lies in a
// prefix the proxy keeps internal whole (embeddedIPv4).
func internalAddr(a netip.Addr) bool {
	if policy.InternalAddr(a) {
		return true
	}
	v4, whole := embeddedIPv4(a)
	if whole {
		return true
	}
	for _, x := range v4 {
		if policy.InternalAddr(x) {
			return true
		}
	}
	return false
}
