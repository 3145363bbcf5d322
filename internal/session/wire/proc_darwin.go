package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// PidNamespace is 1 on macOS, which has one pid space for every process:
// a record's supervisor and any process that reads it share it.
func PidNamespace() (uint64, error) { return 1, nil }

// StartTime is when the process pid started, in microseconds since the
// epoch (the kernel's p_starttime, by sysctl kern.proc.pid). With the pid
// it names one process: a pid is reused, a pid and its start time are
// not.
func StartTime(pid int) (uint64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if int(kp.Proc.P_pid) != pid {
		return 0, syscall.ESRCH
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec), nil
}

// socketpair makes a close-on-exec pair of unix sockets of type typ.
// There is no SOCK_CLOEXEC here: both ends are marked under
// syscall.ForkLock, as package syscall does, so no exec in between
// inherits them.
func socketpair(typ int) ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}

// recvCloexec is no flag here: there is no MSG_CMSG_CLOEXEC, and
// cloexecReceived marks what arrived.
const recvCloexec = 0

// cloexecReceived marks received descriptors close-on-exec, right after
// they arrive. A process started at that moment could inherit one: the
// supervisor starts CMD before its channel carries anything.
func cloexecReceived(fds []int) {
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
}

// peerPid is the pid of the process at the other end of the unix socket
// fd (LOCAL_PEERPID).
func peerPid(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
}

// commandLine is the command line of the process pid, its arguments each
// ended by a NUL, at most max bytes of it: from sysctl kern.procargs2
// (argc, the executable's path, then the arguments).
func commandLine(pid, max int) ([]byte, error) {
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	if len(buf) < 4 {
		return nil, errors.New("kern.procargs2: too short")
	}
	argc := int(binary.LittleEndian.Uint32(buf))
	rest := buf[4:]
	// The executable's path, then NULs up to the first argument.
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, errors.New("kern.procargs2: no executable path")
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	var out []byte
	for n := 0; n < argc && len(rest) > 0; n++ {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			j = len(rest)
		}
		out = append(out, rest[:j]...)
		out = append(out, 0)
		if j == len(rest) {
			break
		}
		rest = rest[j+1:]
	}
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}
