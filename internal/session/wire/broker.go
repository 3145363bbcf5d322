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
	"time"

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

// requestTimeout bounds how long a request may take to arrive.
const requestTimeout = 30 * time.Second

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
