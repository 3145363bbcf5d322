package tty

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// A session with a mount namespace sees a devpts of its own
// (IsolateTerminals): a pseudo-terminal made in the person's devpts
// would have no name there, and ttyname, tty(1), GPG_TTY=$(tty) and the
// prompts of ssh and sudo would fail. So the session's child makes its
// terminal in its own devpts (OpenTerminal), before anything of the
// session runs, and hands the master to the supervisor over a socket
// pair (Handover), which relays it (Relay.Attach). The child closes its
// copy: no process of the session holds the master.

// OpenTerminal makes a pseudo-terminal in the calling thread's devpts
// (/dev/ptmx) with modes, and returns its master and its slave, both
// close-on-exec: the session's first process makes the slave its
// streams and its controlling terminal. The slave is opened from the
// master (TIOCGPTPEER), never by a name another process could have put
// something at.
func OpenTerminal(modes Modes) (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(mfd), "ptmx")
	fail := func(what string, err error) (*os.File, *os.File, error) {
		master.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlock the pseudo-terminal", err)
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return fail("open the pseudo-terminal's slave", errno)
	}
	slave = os.NewFile(r, "pts")
	if err := unix.IoctlSetTermios(int(r), unix.TCSETS, &modes.Termios); err != nil {
		slave.Close()
		return fail("terminal modes", err)
	}
	if err := unix.IoctlSetWinsize(int(r), unix.TIOCSWINSZ, &modes.Size); err != nil {
		slave.Close()
		return fail("window size", err)
	}
	return master, slave, nil
}

// NewHandover returns a connected pair of sockets: the supervisor's end,
// which receives the master (ReceiveTerminal), and the child's, which
// sends it (Handover).
func NewHandover() (supervisorEnd, childEnd *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "terminal-handover"), os.NewFile(uintptr(fds[1]), "terminal-handover"), nil
}

// Handover sends master over the socket sock and closes both.
func Handover(sock, master *os.File) error {
	defer sock.Close()
	defer master.Close()
	return unix.Sendmsg(int(sock.Fd()), []byte{'t'}, unix.UnixRights(int(master.Fd())), nil, 0)
}

// ReceiveTerminal receives the master the child sent over sock. It
// returns an error, not a file, when the child closed its end without
// sending one (it failed before, and said why on its error pipe).
func ReceiveTerminal(sock *os.File) (*os.File, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the session's terminal: %w", err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return nil, errors.New("the session's terminal never came")
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, errors.New("the session's terminal never came")
		}
		return os.NewFile(uintptr(fds[0]), "session-terminal"), nil
	}
}
