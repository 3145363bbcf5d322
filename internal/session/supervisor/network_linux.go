package supervisor

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/netproxy"
	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
)

// startProxy readies the allowlist's proxy of the session launched as
// l: the channel's bridge end is the child's descriptor proxyFD (the
// thread's, started in it), and the proxy serves what comes through it
// until the session ends.
// It returns the function that ends the proxy.
func (s *supervisor) startProxy(l *launched) (fd int, stop func(), err error) {
	child := l.child
	proxyEnd, bridgeEnd, err := bridge.NewChannel()
	if err != nil {
		return 0, nil, err
	}
	proxy, err := s.newProxy(l)
	if err != nil {
		proxyEnd.Close()
		bridgeEnd.Close()
		return 0, nil, err
	}
	child.ExtraFiles = append(child.ExtraFiles, bridgeEnd)
	go func() {
		// It ends when the session's last process, which holds the
		// bridge end, is gone.
		proxy.ServeBridge(proxyEnd)
		proxyEnd.Close()
	}()
	return 2 + len(child.ExtraFiles), func() {
		bridgeEnd.Close()
		proxy.Close()
	}, nil
}

// withNetworkNamespace gives the child attr starts a network namespace
// of its own: in the user namespace attr makes, where there is one, with
// CAP_NET_ADMIN there to bring loopback up (cleared before CMD, as the
// mount layer's capabilities are).
func withNetworkNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
	}
}

// sessionPeer is the proxy's peer of l's session (netproxy.SessionPeer):
// the processes of its network namespace, from its first process.
func sessionPeer(l *launched) func(net.Conn) ([][]netproxy.FileID, error) {
	return netproxy.SessionPeer(l.pid(), l.firstPid())
}
