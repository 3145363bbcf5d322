package wire

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxCallerBytes bounds the command line read for an approver.
const maxCallerBytes = 4096

// PeerCommandLine is the command line of the process at the other end of
// the socket fd (the process that made it, SO_PEERCRED), read from
// /proc, or nil where it cannot be read. It is what the process says of
// itself (a process may rewrite its own argv): an approver is shown it
// as the session's words.
func PeerCommandLine(fd int) []string {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || cred.Pid <= 0 {
		return nil
	}
	f, err := os.Open("/proc/" + strconv.Itoa(int(cred.Pid)) + "/cmdline")
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCallerBytes+1))
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

// ID names the session of r for an approver: its supervisor's pid and
// start time, which no other session shares while r's lives.
func (r *Record) ID() string {
	if r == nil || r.Supervisor <= 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.Supervisor, r.SupervisorStart)
}
