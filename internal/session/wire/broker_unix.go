//go:build unix

package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// NewBroker returns the two ends of a session's escalation channel: the
// supervisor keeps the first, the shell inherits the second. It is a
// datagram-like socket, so that the calls of many processes sharing the
// inherited end never mix: each request carries its own reply socket.
func NewBroker() (supervisor, shell *os.File, err error) {
	fds, err := socketpair(unix.SOCK_SEQPACKET)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "broker"), os.NewFile(uintptr(fds[1]), "broker-shell"), nil
}

// CheckBroker reports whether fd is a session's escalation channel: a
// socket of the kind NewBroker makes.
func CheckBroker(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Errorf("fd %d is not a socket: %v", fd, err)
	}
	if typ != unix.SOCK_SEQPACKET {
		return fmt.Errorf("fd %d is not the supervisor's channel", fd)
	}
	return nil
}

// CheckApprover reports whether fd is the approver channel of the
// session of r: a socket whose other end r's supervisor made, the process
// with its pid and its start time. A call that says it is brokered could
// otherwise hand over a socket of its own that says yes, made by a
// process that came to hold a dead supervisor's pid.
func CheckApprover(fd int, r *Record) error {
	pid, err := peerPid(fd)
	if err != nil {
		return fmt.Errorf("fd %d is not a socket: %v", fd, err)
	}
	if r.Supervisor <= 0 || pid != r.Supervisor {
		return fmt.Errorf("fd %d does not lead to the session's supervisor", fd)
	}
	if start, err := StartTime(r.Supervisor); err != nil || start != r.SupervisorStart {
		return fmt.Errorf("fd %d leads to a process that came to hold the pid of the session's supervisor, which is gone", fd)
	}
	return nil
}

// Forward sends req over the channel fd and waits for the supervisor's
// reply. A closed channel, or a supervisor that is gone, is an error.
func Forward(fd int, req Request) (Reply, error) {
	if err := CheckBroker(fd); err != nil {
		return Reply{}, err
	}
	pair, err := socketpair(unix.SOCK_STREAM)
	if err != nil {
		return Reply{}, err
	}
	mine := os.NewFile(uintptr(pair[0]), "reply")
	defer mine.Close()
	err = unix.Sendmsg(fd, []byte{'r'}, unix.UnixRights(pair[1]), nil, 0)
	unix.Close(pair[1])
	if err != nil {
		return Reply{}, fmt.Errorf("the supervisor's channel is closed: %v", err)
	}
	// A supervisor that refuses at once (too many pending) answers
	// without reading: its reply is the answer, not the failed write.
	sendErr := json.NewEncoder(mine).Encode(req)
	// The request ends here: the supervisor reads to the end of it.
	unix.Shutdown(pair[0], unix.SHUT_WR)
	var rep Reply
	if err := json.NewDecoder(io.LimitReader(mine, 2*maxOutputBytes+4096)).Decode(&rep); err != nil {
		if sendErr != nil {
			return Reply{}, fmt.Errorf("the supervisor did not take the request: %v", sendErr)
		}
		return Reply{}, errors.New("the supervisor gave no answer (it is gone)")
	}
	return rep, nil
}

// Serve reads requests from ch, the supervisor's end of the channel, and
// runs handle for each on a goroutine of its own; the reply goes back to
// that request alone. A request without its reply socket is dropped; a
// malformed one, or one beyond maxPending, is refused without handle. A
// remember is handed to handle on the reading goroutine, in order, and
// handle must answer it at once. A message whose descriptor cannot be
// taken yet waits at the head of the channel (receive). stop ends the
// reading and closes ch; handlers under way finish on their own.
func Serve(ch *os.File, handle func(Request) Reply) (stop func()) {
	fd := int(ch.Fd())
	done := make(chan struct{})
	var stopped atomic.Bool
	go func() {
		defer close(done)
		serve(fd, handle, holdFDs(stopped.Load))
	}()
	return func() {
		stopped.Store(true)
		// Shutdown wakes the blocked receive, which close would not.
		unix.Shutdown(fd, unix.SHUT_RDWR)
		<-done
		ch.Close()
	}
}

// ServeAll is Serve on this goroutine: it returns once ch is closed at
// its other end (by every holder of it).
func ServeAll(ch *os.File, handle func(Request) Reply) {
	serve(int(ch.Fd()), handle, holdFDs(func() bool { return false }))
}

// serve is the channel's reader. hold is its wait while the message at
// the head of the channel waits for a free descriptor (receive), called
// with how long it has waited: it waits a while and says how long, or
// false to drop the message.
func serve(fd int, handle func(Request) Reply, hold func(waited time.Duration) (time.Duration, bool)) {
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(maxFDs*4))
	pending := make(chan struct{}, maxPending)
	var waited time.Duration
	for {
		n, fds, held, err := receive(fd, buf, oob)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		if held {
			// The message waits at the head of the channel, and every
			// one after it, until a descriptor is free, or hold drops it.
			slept, ok := hold(waited)
			waited += slept
			if !ok {
				discard(fd, buf)
				waited = 0
			}
			continue
		}
		waited = 0
		if len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		if buf[0] == memoMark {
			takeMemo(fds[0], handle)
			continue
		}
		// Non-blocking, so the read deadline below holds.
		unix.SetNonblock(fds[0], true)
		conn := os.NewFile(uintptr(fds[0]), "reply")
		select {
		case pending <- struct{}{}:
		default:
			go func() {
				defer conn.Close()
				json.NewEncoder(conn).Encode(Reply{Status: 3, Refused: fmt.Sprintf("%d escalations are pending already; try again once they are answered", maxPending)})
			}()
			continue
		}
		go func() {
			defer func() { <-pending }()
			defer conn.Close()
			// A request that never finishes arriving must not hold its
			// place for ever.
			conn.SetReadDeadline(time.Now().Add(requestTimeout))
			req, err := DecodeRequest(conn)
			if err != nil {
				json.NewEncoder(conn).Encode(Reply{Status: 2, Refused: err.Error()})
				return
			}
			req.Caller = PeerCommandLine(int(conn.Fd()))
			json.NewEncoder(conn).Encode(handle(req))
		}()
	}
}

// takeMemo hands the content of a remember's memfd, fd, to handle as an
// OpRemember, on the channel's reading goroutine, so that it is taken
// before any message sent after it; handle answers it at once and
// nobody reads the reply. fd is closed.
func takeMemo(fd int, handle func(Request) Reply) {
	defer unix.Close(fd)
	if content, ok := readMemo(fd); ok {
		handle(Request{Op: OpRemember, Memo: &Memo{Content: content}})
	}
}

// holdFDs is the channel reader's wait for a free descriptor (serve):
// while the message at its head has waited less than holdMax and
// the channel is still served (stopped false), it sleeps a little
// longer each time, up to holdStep.
func holdFDs(stopped func() bool) func(time.Duration) (time.Duration, bool) {
	return func(waited time.Duration) (time.Duration, bool) {
		if waited >= holdMax || stopped() {
			return 0, false
		}
		step := min(max(waited, time.Millisecond), holdStep)
		time.Sleep(step)
		return step, true
	}
}

// receive takes the next message of the channel fd: n bytes into buf (0
// at the end) and its descriptors. A descriptor the kernel cannot install
// (RLIMIT_NOFILE) is closed and the message delivered without it, which
// would lose a remember or a reply socket; so the message is first read
// with MSG_PEEK, which installs copies and leaves it queued. When they
// cannot all be installed, held is true and the message stays next;
// otherwise it is taken with no room for descriptors, which cannot fail
// for want of one. A message with more than maxFDs is taken with none.
func receive(fd int, buf, oob []byte) (n int, fds []int, held bool, err error) {
	n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, recvCloexec|unix.MSG_PEEK)
	if err != nil || n == 0 {
		return n, nil, false, err
	}
	fds = receivedFDs(oob[:oobn])
	cloexecReceived(fds)
	if flags&unix.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if len(fds) < maxFDs {
			return n, nil, true, nil
		}
		fds = nil
	}
	discard(fd, buf)
	return n, fds, false, nil
}

// discard takes the message at the head of the channel fd, whose
// descriptors the kernel closes; the reader is its only reader, so it is
// the message just peeked.
func discard(fd int, buf []byte) {
	for {
		_, _, _, _, err := unix.Recvmsg(fd, buf, nil, unix.MSG_DONTWAIT)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}
