package wire

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
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

// maxRequestBytes bounds one request: it carries a write's content.
const maxRequestBytes = 64 << 20

// maxOutputBytes bounds what a reply carries of the call's output: a
// result line, bounded diff included, and the notes on its stderr.
const maxOutputBytes = 16 << 20

// maxPending bounds the requests a supervisor holds at once, waiting
// for their approval or running: past it a request is refused at once.
// A flood of escalations is refused, never let through, and never
// queues questions for the person faster than they can read them.
const maxPending = 16

// The operations a supervisor carries out for a session: the only ones
// --escalate can lift.
const (
	OpWrite  = request.OpWrite
	OpEdit   = request.OpEdit
	OpPatch  = request.OpPatch
	OpMkdir  = request.OpMkdir
	OpMove   = request.OpMove
	OpRemove = request.OpRemove
)

// Request is one escalated operation a session asks the supervisor to
// carry out (docs/design.md §10): typed, decoded strictly, and never an
// argv that the supervisor parses again. It carries the typed request of
// package request, and the supervisor runs it through the same execution
// (request.Exec), with the trusted approval deciding, as the file tool
// would run it in place.
type Request struct {
	// Op is OpWrite, OpEdit, OpPatch, OpMkdir, OpMove or OpRemove;
	// exactly the matching typed request is set.
	Op string `json:"op"`
	// Escalate is the mode the call asks for.
	Escalate string `json:"escalate"`
	// Dir is the caller's working directory, absolute: the base of a
	// relative path.
	Dir string `json:"dir"`
	// Env are the caller's DSH_FS_* setting variables: they may only
	// narrow the pinned record there.
	Env []string `json:"env,omitempty"`
	// Reason is the model's own reason for the escalation (--reason),
	// shown to the approver as the model's words.
	Reason string `json:"reason,omitempty"`
	// Caller is the calling command line, as the supervisor read it
	// from the process at the other end of the request's socket
	// (PeerCommandLine): whatever a sender says here is replaced.
	Caller []string `json:"caller,omitempty"`

	Write  *request.Write  `json:"write,omitempty"`
	Edit   *request.Edit   `json:"edit,omitempty"`
	Patch  *request.Patch  `json:"patch,omitempty"`
	Mkdir  *request.Mkdir  `json:"mkdir,omitempty"`
	Move   *request.Move   `json:"move,omitempty"`
	Remove *request.Remove `json:"rm,omitempty"`
	// Memo is the body of OpRemember and OpRecall, the session's memory
	// of its reads (memo.go): no escalation, nothing run.
	Memo *Memo `json:"memo,omitempty"`
}

// Carrying is the Request that carries r, a Write, an Edit, a Patch, a
// Mkdir, a Move or a Remove,
// with its Op; its Escalate, Dir and Env are the sender's to fill in. Any
// other request gives one that Check refuses.
func Carrying(r request.Request) Request {
	req := Request{Op: r.Op()}
	switch r := r.(type) {
	case request.Write:
		req.Write = &r
	case request.Edit:
		req.Edit = &r
	case request.Patch:
		req.Patch = &r
	case request.Mkdir:
		req.Mkdir = &r
	case request.Move:
		req.Move = &r
	case request.Remove:
		req.Remove = &r
	}
	return req
}

// Typed is the typed request req carries (nil when none is set); after
// DecodeRequest it is the whole of the operation.
func (req Request) Typed() request.Request {
	switch {
	case req.Op == OpWrite && req.Write != nil:
		return *req.Write
	case req.Op == OpEdit && req.Edit != nil:
		return *req.Edit
	case req.Op == OpPatch && req.Patch != nil:
		return *req.Patch
	case req.Op == OpMkdir && req.Mkdir != nil:
		return *req.Mkdir
	case req.Op == OpMove && req.Move != nil:
		return *req.Move
	case req.Op == OpRemove && req.Remove != nil:
		return *req.Remove
	}
	return nil
}

// DecodeRequest reads one request from r, strictly: no unknown field, no
// data after it, and Check must pass. A request of any other shape (an
// argv, a read, one that asks for no escalation, a path beside the typed
// request) is an error, and nothing runs.
func DecodeRequest(r io.Reader) (Request, error) {
	dec := json.NewDecoder(io.LimitReader(r, maxRequestBytes))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("a malformed request: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Request{}, errors.New("a malformed request: data after the request")
	}
	if err := req.Check(); err != nil {
		return Request{}, err
	}
	return req, nil
}

// Check says what is wrong with req, or nil.
func (req Request) Check() error {
	switch req.Op {
	case OpRemember:
		return errors.New("a remember comes as a sealed memfd, never as a request")
	case OpRecall:
		return req.checkMemo()
	}
	if req.isFolderOp() {
		return req.checkFolderOp()
	}
	switch {
	case req.Memo != nil:
		return errors.New("a memo rides only on remember and recall")
	case req.Op != OpWrite && req.Op != OpEdit && req.Op != OpPatch:
		return fmt.Errorf("the supervisor carries out only write, edit, patch, mkdir, move and rm, not %q", req.Op)
	case req.Op == OpPatch && (req.Patch == nil || len(req.Patch.Patch) == 0 || req.Write != nil || req.Edit != nil):
		return errors.New("a patch carries its patch, and no path or anything of a write or an edit")
	case req.Op == OpWrite && (req.Write == nil || req.Edit != nil || req.Patch != nil):
		return errors.New("a write carries its content and nothing of an edit")
	case req.Op == OpEdit && (req.Edit == nil || req.Write != nil || req.Patch != nil):
		return errors.New("an edit carries its edits and nothing of a write")
	case req.Op != OpPatch && req.typedPath() == "":
		return errors.New("a request with no path")
	case req.Escalate == "":
		return errors.New("the supervisor carries out only calls that ask to escalate")
	case req.Dir != "" && !filepath.IsAbs(req.Dir):
		return errors.New("a request whose working directory is not absolute")
	case req.Op == OpEdit && len(req.Edit.Edits) == 0:
		return errors.New("an edit with no edits")
	}
	if _, err := policy.ParseMode(req.Escalate); err != nil {
		return fmt.Errorf("escalate: %v", err)
	}
	return nil
}

// isFolderOp says req is a mkdir, a move or a rm: the requests that carry
// paths and no content.
func (req Request) isFolderOp() bool {
	return req.Op == OpMkdir || req.Op == OpMove || req.Op == OpRemove
}

// checkFolderOp is Check for a mkdir, a move or a rm: exactly its own
// typed request, its paths given.
func (req Request) checkFolderOp() error {
	set := 0
	for _, isSet := range []bool{req.Write != nil, req.Edit != nil, req.Patch != nil, req.Mkdir != nil, req.Move != nil, req.Remove != nil, req.Memo != nil} {
		if isSet {
			set++
		}
	}
	var paths []string
	switch {
	case req.Op == OpMkdir && req.Mkdir != nil:
		paths = []string{req.Mkdir.Path}
	case req.Op == OpMove && req.Move != nil:
		paths = []string{req.Move.Source, req.Move.Destination}
	case req.Op == OpRemove && req.Remove != nil:
		paths = []string{req.Remove.Path}
	}
	switch {
	case set != 1 || paths == nil:
		return fmt.Errorf("a %s carries its own request and nothing else", req.Op)
	case slices.Contains(paths, ""):
		return errors.New("a request with no path")
	case req.Escalate == "":
		return errors.New("the supervisor carries out only calls that ask to escalate")
	case req.Dir != "" && !filepath.IsAbs(req.Dir):
		return errors.New("a request whose working directory is not absolute")
	}
	if _, err := policy.ParseMode(req.Escalate); err != nil {
		return fmt.Errorf("escalate: %v", err)
	}
	return nil
}

// typedPath is the path of the typed request req carries, "" for none.
func (req Request) typedPath() string {
	switch {
	case req.Write != nil:
		return req.Write.Path
	case req.Edit != nil && req.Edit.Path == "" && len(req.Edit.Paths) > 0:
		return req.Edit.Paths[0]
	case req.Edit != nil:
		return req.Edit.Path
	}
	return ""
}

// Reply is the supervisor's answer: the exit status of the call it ran,
// with what it printed, or why it ran none.
type Reply struct {
	Status  int    `json:"status"`
	Refused string `json:"refused,omitempty"`
	// Stdout is the call's result; Stderr its notes (an
	// approval_command's output among them).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Content is a recall's answer: the content remembered, absent when
	// none is.
	Content []byte `json:"content,omitempty"`
}

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

// maxFDs is the most descriptors a message of the channel is read with:
// one of this tree carries one.
const maxFDs = 4

// holdMax bounds how long the channel's reader waits for a free
// descriptor for the message at its head (receive): past it the message
// is dropped, as one whose descriptors the kernel refused for good (a
// security module's refusal) would otherwise hold the channel for ever.
// holdStep is the longest single wait.
const (
	holdMax  = requestTimeout
	holdStep = 50 * time.Millisecond
)

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

// requestTimeout bounds how long a request may take to arrive.
const requestTimeout = 30 * time.Second

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
	Request  policy.EscalationRequest `json:"request"`
	DiffText string                   `json:"diff_text"`
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
