//go:build unix

package wire

import (
	"bytes"
)

// PeerCommandLine is the command line of the process at the other end of
// the socket fd (the process that made it, SO_PEERCRED, LOCAL_PEERPID), read
// from the kernel (/proc, sysctl), or nil where it cannot be read. It is what the process says of
// itself (a process may rewrite its own argv): an approver is shown it
// as the session's words.
func PeerCommandLine(fd int) []string {
	pid, err := peerPid(fd)
	if err != nil || pid <= 0 {
		return nil
	}
	b, err := commandLine(pid, maxCallerBytes+1)
	if err != nil || len(b) == 0 {
		return nil
	}
	cut := len(b) > maxCallerBytes
	if cut {
		b = b[:maxCallerBytes]
	}
	args := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	out := make([]string, 0, len(args)+1)
	for _, a := range args {
		out = append(out, string(a))
	}
	if cut {
		out = append(out, "…")
	}
	return out
}
