package netproxy

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// ServeBridge serves the connections the session's bridge sends over
// ctrl (a SOCK_SEQPACKET unix socket, one descriptor a message) until
// ctrl closes or Close is called.
func (p *Proxy) ServeBridge(ctrl *os.File) {
	p.wg.Add(1)
	defer p.wg.Done()
	fd := int(ctrl.Fd())
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || oobn == 0 {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			continue
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil {
			continue
		}
		for _, f := range fds {
			file := os.NewFile(uintptr(f), "bridged")
			c, err := net.FileConn(file)
			file.Close()
			if err != nil {
				continue
			}
			if !p.serve(c) {
				return
			}
		}
	}
}
