package wire

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PidNamespace is the pid namespace of this process: the inode of
// /proc/self/ns/pid, which names the namespace while it lives.
func PidNamespace() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// StartTime is when the process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat). With the pid it names one process: a pid
// is reused, a pid and its start time are not.
func StartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses itself: the fields that follow come after the last.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (the state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// socketpair makes a close-on-exec pair of unix sockets of type typ.
func socketpair(typ int) ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
}

// recvCloexec makes the descriptors a message carries close-on-exec as
// they arrive.
const recvCloexec = unix.MSG_CMSG_CLOEXEC

// cloexecReceived marks received descriptors close-on-exec: recvCloexec
// did, here.
func cloexecReceived([]int) {}

// peerPid is the pid of the process that made the other end of the
// socket fd (SO_PEERCRED).
func peerPid(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// commandLine is the command line of the process pid, its arguments each
// ended by a NUL, at most max bytes of it: /proc/PID/cmdline.
func commandLine(pid, max int) ([]byte, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(max)))
}
