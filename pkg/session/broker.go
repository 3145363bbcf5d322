package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// The variables of the escalation channel. BrokerEnv names the inherited
// socket a call inside a session sends its escalations to; the
// supervisor sets BrokeredEnv and ApproverEnv on the call it runs for
// one, whose approver (approval: supervisor) it answers over that fd.
const (
	BrokerEnv   = "DSH_FS_BROKER_FD"
	BrokeredEnv = "DSH_FS_BROKERED"
	ApproverEnv = "DSH_FS_APPROVER_FD"
)

// maxRequestBytes bounds one request: its arguments may carry content.
const maxRequestBytes = 64 << 20

// Request is a call a session forwards to the supervisor: its arguments
// (the command first), its directory and its DSH_FS_* variables. Its
// standard streams travel beside it as file descriptors.
type Request struct {
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// Reply is the supervisor's answer: the exit status of the call it ran,
// or why it ran none.
type Reply struct {
	Status  int    `json:"status"`
	Refused string `json:"refused,omitempty"`
}

// NewBroker returns the two ends of a session's escalation channel: the
// supervisor keeps the first, the shell inherits the second. It is a
// datagram-like socket, so that the calls of many processes sharing the
// inherited end never mix: each request carries its own reply socket.
func NewBroker() (supervisor, shell *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
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
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("fd %d is not a socket: %v", fd, err)
	}
	if r.Supervisor <= 0 || int(cred.Pid) != r.Supervisor {
		return fmt.Errorf("fd %d does not lead to the session's supervisor", fd)
	}
	if start, err := StartTime(r.Supervisor); err != nil || start != r.SupervisorStart {
		return fmt.Errorf("fd %d leads to a process that came to hold the pid of the session's supervisor, which is gone", fd)
	}
	return nil
}

// Forward sends req, with stdio as the call's standard streams, over the
// channel fd and waits for the supervisor's reply. A closed channel, or
// a supervisor that is gone, is an error.
func Forward(fd int, req Request, stdio [3]*os.File) (Reply, error) {
	if err := CheckBroker(fd); err != nil {
		return Reply{}, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return Reply{}, err
	}
	mine := os.NewFile(uintptr(pair[0]), "reply")
	defer mine.Close()
	rights := unix.UnixRights(pair[1], int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	err = unix.Sendmsg(fd, []byte{'r'}, rights, nil, 0)
	unix.Close(pair[1])
	if err != nil {
		return Reply{}, fmt.Errorf("the supervisor's channel is closed: %v", err)
	}
	if err := json.NewEncoder(mine).Encode(req); err != nil {
		return Reply{}, fmt.Errorf("the supervisor did not take the request: %v", err)
	}
	var rep Reply
	if err := json.NewDecoder(mine).Decode(&rep); err != nil {
		return Reply{}, errors.New("the supervisor gave no answer (it is gone)")
	}
	return rep, nil
}

// Serve reads requests from the supervisor's end of the channel, ch, on
// a goroutine of its own, and runs handle for each on another; handle's
// reply goes back to that request alone. A request that does not come
// with its reply socket and three streams is dropped. stop ends the
// reading and closes ch; handlers under way finish on their own.
func Serve(ch *os.File, handle func(Request, [3]*os.File) Reply) (stop func()) {
	fd := int(ch.Fd())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(fd, handle)
	}()
	return func() {
		// Shutdown wakes the blocked receive, which close would not.
		unix.Shutdown(fd, unix.SHUT_RDWR)
		<-done
		ch.Close()
	}
}

// ServeAll is Serve on this goroutine: it returns once ch is closed at
// its other end (by every holder of it).
func ServeAll(ch *os.File, handle func(Request, [3]*os.File) Reply) {
	serve(int(ch.Fd()), handle)
}

func serve(fd int, handle func(Request, [3]*os.File) Reply) {
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		fds := receivedFDs(oob[:oobn])
		if len(fds) != 4 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		conn := os.NewFile(uintptr(fds[0]), "reply")
		stdio := [3]*os.File{os.NewFile(uintptr(fds[1]), "stdin"), os.NewFile(uintptr(fds[2]), "stdout"), os.NewFile(uintptr(fds[3]), "stderr")}
		go func() {
			defer conn.Close()
			defer func() {
				for _, f := range stdio {
					f.Close()
				}
			}()
			var req Request
			if err := json.NewDecoder(io.LimitReader(conn, maxRequestBytes)).Decode(&req); err != nil {
				json.NewEncoder(conn).Encode(Reply{Status: 2, Refused: "a malformed request"})
				return
			}
			json.NewEncoder(conn).Encode(handle(req, stdio))
		}()
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

// Ask is what a brokered call asks the supervisor to approve: the
// escalation request as an approval_command would read it, and the text
// of its diff for a person.
type Ask struct {
	Request  sandbox.EscalationRequest `json:"request"`
	DiffText string                    `json:"diff_text"`
}

// Answer is the supervisor's decision on an Ask: "" approves.
type Answer struct {
	Refused string `json:"refused"`
}

// AskSupervisor puts ask to the supervisor over the approver socket fd
// (one question per call, as a brokered call asks) and returns its
// refusal, or nil when it approved.
func AskSupervisor(fd int, ask Ask) error {
	f := os.NewFile(uintptr(fd), "approver")
	if f == nil {
		return errors.New("no channel to the supervisor")
	}
	return NewAsker(f).Ask(ask)
}

// Asker puts questions to whoever answers the other end of a stream, one
// at a time, over one connection.
type Asker struct {
	mu  sync.Mutex
	enc *json.Encoder
	dec *json.Decoder
}

// NewAsker returns the Asker of conn.
func NewAsker(conn io.ReadWriter) *Asker {
	return &Asker{enc: json.NewEncoder(conn), dec: json.NewDecoder(bufio.NewReader(conn))}
}

// Ask puts ask and returns the refusal, or nil when it was approved.
func (a *Asker) Ask(ask Ask) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enc.Encode(ask); err != nil {
		return fmt.Errorf("the supervisor cannot be asked: %v", err)
	}
	var ans Answer
	if err := a.dec.Decode(&ans); err != nil {
		return errors.New("the supervisor gave no answer")
	}
	if ans.Refused != "" {
		return errors.New(ans.Refused)
	}
	return nil
}

// AnswerAsks reads the Asks of one brokered call from conn and writes
// decide's answer to each, until conn is closed.
func AnswerAsks(conn io.ReadWriter, decide func(Ask) error) {
	dec := json.NewDecoder(bufio.NewReader(conn))
	enc := json.NewEncoder(conn)
	for {
		var ask Ask
		if err := dec.Decode(&ask); err != nil {
			return
		}
		var ans Answer
		if err := decide(ask); err != nil {
			ans.Refused = err.Error()
		}
		if enc.Encode(ans) != nil {
			return
		}
	}
}

// EnvFD reads a file descriptor number from the variable value v.
func EnvFD(v string) (int, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return 0, fmt.Errorf("%q is not an inherited descriptor", v)
	}
	return fd, nil
}
