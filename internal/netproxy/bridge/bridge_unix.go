//go:build unix

package bridge

import (
	"errors"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bridge hands every connection l accepts to the proxy over ctrl, until
// ctrl or l fails: the connection's descriptor travels, its bytes are
// never copied here. It runs in the session's first process, inside the
// sandbox; what it holds (a loopback listener and ctrl) reaches nothing
// but the proxy.
func Bridge(l *net.TCPListener, ctrl *os.File) error {
	fd := int(ctrl.Fd())
	// The loop uses the descriptor alone: ctrl must not be collected,
	// and its descriptor closed, while it runs.
	defer runtime.KeepAlive(ctrl)
	for {
		c, err := l.AcceptTCP()
		if errors.Is(err, net.ErrClosed) {
			return err
		}
		if err != nil {
			// Out of descriptors, a connection reset before it was
			// accepted: the next one may be served.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		f, err := c.File()
		c.Close()
		if err != nil {
			continue
		}
		err = unix.Sendmsg(fd, []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0)
		f.Close()
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
