package child

import (
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/netproxy/bridge"
)

// startBridge starts, in the session's first process, the bridge from a
// loopback port of its network namespace to the proxy's channel at fd,
// and returns CMD's environment env naming that port.
func startBridge(fd int, env []string) ([]string, error) {
	// CMD and what it starts never hold the channel.
	unix.CloseOnExec(fd)
	l, err := bridge.Listen()
	if err != nil {
		return nil, err
	}
	go bridge.Bridge(l, os.NewFile(uintptr(fd), "proxy-channel"))
	return bridge.Env(env, l.Addr().(*net.TCPAddr).Port), nil
}
