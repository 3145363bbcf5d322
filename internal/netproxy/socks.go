package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
)

// SOCKS5 (RFC 1928), without authentication, CONNECT only.
const (
	socksVersion     = 5
	socksNoAuth      = 0
	socksNoMethod    = 0xff
	socksConnect     = 1
	socksIPv4        = 1
	socksDomain      = 3
	socksIPv6        = 4
	socksOK          = 0
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksBadCommand  = 7
	socksBadAddress  = 8
)

// socks serves one SOCKS5 client: the name it asks for (socks5h://) is
// matched as the client spelled it, an address by the IP entries.
func (p *Proxy) socks(c net.Conn, br *bufio.Reader) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == socksNoAuth
	}
	if !ok {
		c.Write([]byte{socksVersion, socksNoMethod})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil {
		return
	}
	reply := func(code byte) {
		c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	}
	if req[0] != socksVersion || req[1] != socksConnect {
		reply(socksBadCommand)
		return
	}
	var host string
	switch req[3] {
	case socksIPv4, socksIPv6:
		n := 4
		if req[3] == socksIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case socksDomain:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		host = string(b)
	default:
		reply(socksBadAddress)
		return
	}
	pb := make([]byte, 2)
	if _, err := io.ReadFull(br, pb); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb))
	up, err := p.dial(context.Background(), c, host, port)
	if err != nil {
		var r *Refusal
		switch {
		case errors.As(err, &r):
			reply(socksNotAllowed)
		default:
			reply(socksUnreachable)
		}
		return
	}
	defer up.Close()
	// The bound address is the proxy's own, of no use to the client.
	bound := netip.MustParseAddrPort("0.0.0.0:0")
	if ap, err := netip.ParseAddrPort(up.LocalAddr().String()); err == nil && ap.Addr().Is4() {
		bound = ap
	}
	out := []byte{socksVersion, socksOK, 0, socksIPv4}
	out = append(out, bound.Addr().AsSlice()...)
	out = binary.BigEndian.AppendUint16(out, bound.Port())
	if _, err := c.Write(out); err != nil {
		return
	}
	pipe(c, br, up)
}
