package bridge

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// NewChannel is the channel between the supervisor's proxy and the
// session's bridge: a SOCK_SEQPACKET pair, each message one descriptor.
// The supervisor keeps proxyEnd (Proxy.ServeBridge), the session's first
// process inherits bridgeEnd (Bridge).
func NewChannel() (proxyEnd, bridgeEnd *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("proxy channel: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "proxy"), os.NewFile(uintptr(fds[1]), "bridge"), nil
}
