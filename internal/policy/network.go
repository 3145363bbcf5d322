package policy

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Network says what a dsh-fs exec session's shell may reach over the
// network (docs/design.md §10), ordered from narrowest to widest.
type Network string

// The network settings.
const (
	// NetworkOff gives the shell a network namespace of its own with only
	// loopback: nothing leaves it, the host's 127.0.0.1 included.
	NetworkOff Network = "off"
	// NetworkAllowlist is NetworkOff plus the session's proxy, which
	// reaches only the hosts network_allow names.
	NetworkAllowlist Network = "allowlist"
	// NetworkOn leaves the shell the host's network.
	NetworkOn Network = "on"
)

// NetworkApproval says who is asked about a host the allowlist proxy
// refuses (network_approval, trusted only): nobody (the default), the
// harness's approval_command, or the person at the dsh-fs exec
// supervisor's terminal. The file approval never decides it.
type NetworkApproval string

// The network_approval settings.
const (
	NetworkApprovalNone       NetworkApproval = "none"
	NetworkApprovalCommand    NetworkApproval = "command"
	NetworkApprovalSupervisor NetworkApproval = "supervisor"
)

// ParseNetworkApproval returns the network_approval setting named s.
func ParseNetworkApproval(s string) (NetworkApproval, error) {
	switch a := NetworkApproval(s); a {
	case NetworkApprovalNone, NetworkApprovalCommand, NetworkApprovalSupervisor:
		return a, nil
	}
	return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("unknown network_approval %q (want none, command or supervisor)", s))
}

// Asks reports whether a refused host is put to anyone.
func (a NetworkApproval) Asks() bool {
	return a == NetworkApprovalCommand || a == NetworkApprovalSupervisor
}

// Networks lists every network setting, narrowest first.
var Networks = []Network{NetworkOff, NetworkAllowlist, NetworkOn}

// ParseNetwork returns the network setting named s.
func ParseNetwork(s string) (Network, error) {
	for _, n := range Networks {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("unknown network %q (want off, allowlist or on)", s))
}

func (n Network) rank() int {
	for i, x := range Networks {
		if x == n {
			return i
		}
	}
	return -1
}

// Wider reports whether n reaches more than o.
func (n Network) Wider(o Network) bool { return n.rank() > o.rank() }

// DefaultNetwork is the network of mode m when no trusted source sets
// one: the host's in danger-full-access (the harness asked for no
// sandbox), none otherwise.
func DefaultNetwork(m Mode) Network {
	if m == DangerFullAccess {
		return NetworkOn
	}
	return NetworkOff
}

// NetworkEntry is one network_allow entry: a host name ("example.com"),
// every name beneath one ("*.example.com", not the name itself), or an
// IP address, each with an optional port ("example.com:443",
// "[::1]:8080"); without one, any port.
type NetworkEntry struct {
	// Host is the name, lower case, without the "*." of a wildcard; or
	// the address's text for an IP entry.
	Host     string
	Wildcard bool
	// Addr is set for an IP entry.
	Addr netip.Addr
	// Port is 0 for any port.
	Port int
}

// ParseNetworkEntry parses one network_allow entry.
func ParseNetworkEntry(s string) (NetworkEntry, error) {
	host, port := s, 0
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return NetworkEntry{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		host, port = h, n
	} else if strings.HasPrefix(s, "[") {
		host = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return NetworkEntry{Host: a.Unmap().String(), Addr: a.Unmap(), Port: port}, nil
	}
	e := NetworkEntry{Host: strings.ToLower(host), Port: port}
	if rest, ok := strings.CutPrefix(e.Host, "*."); ok {
		e.Host, e.Wildcard = rest, true
	}
	if !validHostName(e.Host) {
		return NetworkEntry{}, fmt.Errorf("%q is not a host name, *.name, or an IP address, with an optional :port", s)
	}
	return e, nil
}

// validHostName reports whether h is a DNS name made of letters, digits,
// hyphens and underscores, in dot-separated labels.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// NetworkAllow is a parsed network_allow list.
type NetworkAllow []NetworkEntry

// ParseNetworkAllow parses every entry of list.
func ParseNetworkAllow(list []string) (NetworkAllow, error) {
	out := make(NetworkAllow, 0, len(list))
	for _, s := range list {
		e, err := ParseNetworkEntry(s)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// AllowsName reports whether the name host (as the client asked for
// it: a CONNECT authority, a Host header, a SOCKS name) at port is
// allowed. An IP address asked for by its text is matched by IP entries.
func (a NetworkAllow) AllowsName(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if addr, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return a.AllowsAddr(addr, port)
	}
	for _, e := range a {
		if e.Addr.IsValid() || (e.Port != 0 && e.Port != port) {
			continue
		}
		if e.Wildcard && strings.HasSuffix(host, "."+e.Host) || !e.Wildcard && host == e.Host {
			return true
		}
	}
	return false
}

// AllowsAddr reports whether an IP entry names addr (at port).
func (a NetworkAllow) AllowsAddr(addr netip.Addr, port int) bool {
	addr = addr.Unmap()
	for _, e := range a {
		if e.Addr.IsValid() && e.Addr == addr && (e.Port == 0 || e.Port == port) {
			return true
		}
	}
	return false
}

// InternalAddr reports whether addr is one a name must not resolve to
// unless an IP entry names it: loopback, private, link-local (the cloud
// metadata endpoint 169.254.169.254), unspecified, multicast, CGNAT and
// the unique-local IPv6 ranges.
func InternalAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return true
	}
	return netip.MustParsePrefix("100.64.0.0/10").Contains(addr) || netip.MustParsePrefix("0.0.0.0/8").Contains(addr)
}

// OpNetwork is the op of an EscalationRequest for a host the session's
// proxy refused: its Path is the host and port asked for, From and To the
// session's mode (the mode does not change).
const OpNetwork = "network"
