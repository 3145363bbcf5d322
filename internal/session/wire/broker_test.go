package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
)

// Requests from many callers sharing the one inherited end each get their
// own reply.
func TestBrokerRepliesToEachCaller(t *testing.T) {
	sup, shell, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	stop := Serve(sup, func(req Request) Reply {
		return Reply{Status: len(req.Write.Path), Stdout: req.Write.Path}
	})
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			path := strings.Repeat("x", n)
			rep, err := Forward(int(shell.Fd()), Request{Op: OpWrite, Escalate: "danger-full-access", Write: &request.Write{Path: path}})
			if err != nil || rep.Status != n || rep.Stdout != path {
				t.Errorf("caller %d: reply %+v, %v", n, rep, err)
			}
		}(i)
	}
	wg.Wait()
	stop()
}

// A flood of requests is refused past maxPending, never let through or
// queued: the handler sees at most maxPending at once.
func TestBrokerBoundsPending(t *testing.T) {
	sup, shell, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	release := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	stop := Serve(sup, func(req Request) Reply {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return Reply{}
	})
	const callers = 3 * maxPending
	var wg sync.WaitGroup
	var refused, served sync.Map
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := Forward(int(shell.Fd()), Request{Op: OpWrite, Escalate: "danger-full-access", Write: &request.Write{Path: "x"}})
			switch {
			case err != nil:
				t.Errorf("caller %d: %v", i, err)
			case rep.Refused != "":
				refused.Store(i, rep.Refused)
			default:
				served.Store(i, true)
			}
		}()
	}
	// The refused callers are answered at once, while the others wait.
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n < callers-maxPending && time.Now().Before(deadline); {
		n = 0
		refused.Range(func(any, any) bool { n++; return true })
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	stop()
	n := 0
	refused.Range(func(_, why any) bool {
		n++
		if !strings.Contains(why.(string), "pending") {
			t.Errorf("refusal %q does not say why", why)
		}
		return true
	})
	if n != callers-maxPending || most > maxPending {
		t.Errorf("%d refused, at most %d handled at once; want %d refused and at most %d at once", n, most, callers-maxPending, maxPending)
	}
}

// A supervisor that is gone, or a descriptor that is not its channel, is
// an error for the caller, never a silent success.
func TestForwardWithoutSupervisor(t *testing.T) {
	sup, shell, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	sup.Close()
	if _, err := Forward(int(shell.Fd()), Request{Op: OpWrite}); err == nil {
		t.Error("Forward to a closed supervisor succeeded")
	}
	shell.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if _, err := Forward(int(r.Fd()), Request{}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Forward over a pipe = %v, want not a socket", err)
	}
	if _, err := EnvFD("1"); err == nil {
		t.Error("EnvFD(1) accepted a standard stream")
	}
}

// The channel's requests are typed and decoded strictly: anything but a
// write, an edit, a patch, a mkdir, a move or a rm that asks to escalate, with exactly its own inputs,
// is refused, whatever it carries.
func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"write", `{"op":"write","path":"x","escalate":"danger-full-access","dir":"/w","write":{"content":"aGk="}}`, ""},
		{"edit", `{"op":"edit","path":"x","escalate":"workspace-write","edit":{"edits":[{"old":"a","new":"b"}]}}`, ""},
		{"argv", `{"args":["write","x","--content","--escalate"],"dir":"/w"}`, "unknown field"},
		{"no escalation", `{"op":"write","path":"x","write":{"content":""}}`, "ask to escalate"},
		{"escalate spelled as content", `{"op":"write","path":"x","write":{"content":"LS1lc2NhbGF0ZQ=="}}`, "ask to escalate"},
		{"unknown mode", `{"op":"write","path":"x","escalate":"root","write":{}}`, "escalate:"},
		{"other op", `{"op":"chmod","path":"x","escalate":"danger-full-access"}`, "only write, edit, patch, mkdir, move and rm"},
		{"mkdir with a path beside", `{"op":"mkdir","path":"x","escalate":"danger-full-access"}`, "carries its own request"},
		{"mkdir", `{"op":"mkdir","escalate":"danger-full-access","dir":"/w","mkdir":{"path":"x","parents":true}}`, ""},
		{"move", `{"op":"move","escalate":"danger-full-access","move":{"source":"a","destination":"b"}}`, ""},
		{"move without a destination", `{"op":"move","escalate":"danger-full-access","move":{"source":"a"}}`, "no path"},
		{"rm", `{"op":"rm","escalate":"danger-full-access","rm":{"path":"x"}}`, ""},
		{"rm with a write", `{"op":"rm","escalate":"danger-full-access","rm":{"path":"x"},"write":{}}`, "carries its own request"},
		{"rm without escalation", `{"op":"rm","rm":{"path":"x"}}`, "ask to escalate"},
		{"rm recursive", `{"op":"rm","escalate":"danger-full-access","rm":{"path":"x","recursive":true}}`, "unknown field"},
		{"no path", `{"op":"write","escalate":"danger-full-access","write":{}}`, "no path"},
		{"patch", `{"op":"patch","escalate":"danger-full-access","dir":"/w","patch":{"patch":"KioqIEJlZ2luIFBhdGNo"}}`, ""},
		{"patch with a path", `{"op":"patch","path":"x","escalate":"danger-full-access","patch":{"patch":"eA=="}}`, "carries its patch"},
		{"patch without its patch", `{"op":"patch","escalate":"danger-full-access"}`, "carries its patch"},
		{"write with a patch", `{"op":"write","path":"x","escalate":"danger-full-access","write":{},"patch":{"patch":"eA=="}}`, "nothing of an edit"},
		{"relative dir", `{"op":"write","path":"x","dir":"w","escalate":"danger-full-access","write":{}}`, "not absolute"},
		{"write with edits", `{"op":"write","path":"x","escalate":"danger-full-access","write":{},"edit":{"edits":[{"old":"a","new":"b"}]}}`, "nothing of an edit"},
		{"write without content", `{"op":"write","path":"x","escalate":"danger-full-access"}`, "carries its content"},
		{"edit without edits", `{"op":"edit","path":"x","escalate":"danger-full-access","edit":{"edits":[]}}`, "no edits"},
		{"unknown edit field", `{"op":"edit","path":"x","escalate":"danger-full-access","edit":{"edits":[{"old":"a","new":"b","regex":true}]}}`, "unknown field"},
		{"trailing data", `{"op":"write","path":"x","escalate":"danger-full-access","write":{}} {}`, "data after"},
		{"typed write", `{"op":"write","escalate":"danger-full-access","dir":"/w","write":{"path":"x","content":"aGk=","if_match":"ab","dry_run":true,"diff":"full"}}`, ""},
		{"typed edit", `{"op":"edit","escalate":"danger-full-access","edit":{"path":"x","edits":[{"old":"a","new":"b"}]}}`, ""},
		{"typed write without a path", `{"op":"write","escalate":"danger-full-access","write":{"content":"aGk="}}`, "no path"},
		{"two paths", `{"op":"write","path":"x","escalate":"danger-full-access","write":{"path":"y"}}`, "path beside the write differs"},
		{"a pin beside", `{"op":"edit","path":"x","if_match":"ab","escalate":"danger-full-access","edit":{"edits":[{"old":"a","new":"b"}]}}`, "unknown field"},
		{"a diff form beside", `{"op":"patch","diff":"full","escalate":"danger-full-access","patch":{"patch":"eA=="}}`, "unknown field"},
		{"dry run beside", `{"op":"write","path":"x","dry_run":true,"escalate":"danger-full-access","write":{}}`, "unknown field"},
		{"unknown typed field", `{"op":"write","escalate":"danger-full-access","write":{"path":"x","args":["y"]}}`, "unknown field"},
		{"not JSON", `write x`, "malformed"},
		{"empty", ``, "malformed"},
	} {
		_, err := DecodeRequest(strings.NewReader(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// A path said beside the typed request, as senders said it before
// package request, decodes to the same typed request as one said in it;
// Carrying builds the request that says it in it.
func TestDecodeRequestMovesThePathOntoTheTypedRequest(t *testing.T) {
	want := request.Write{Path: "x", Content: []byte("hi"), Overwrite: true,
		Mutation: request.Mutation{IfMatch: "ab", DryRun: true, Diff: "summary"}}
	for _, body := range []string{
		`{"op":"write","path":"x","escalate":"danger-full-access","write":{"content":"aGk=","overwrite":true,"if_match":"ab","dry_run":true,"diff":"summary"}}`,
		`{"op":"write","escalate":"danger-full-access","write":{"path":"x","content":"aGk=","overwrite":true,"if_match":"ab","dry_run":true,"diff":"summary"}}`,
		`{"op":"write","path":"x","escalate":"danger-full-access","write":{"path":"x","content":"aGk=","overwrite":true,"if_match":"ab","dry_run":true,"diff":"summary"}}`,
	} {
		req, err := DecodeRequest(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got, ok := req.Typed().(request.Write)
		if !ok || got.Path != want.Path || string(got.Content) != string(want.Content) || got.Overwrite != want.Overwrite || !reflect.DeepEqual(got.Mutation, want.Mutation) {
			t.Errorf("%s: typed %+v, want %+v", body, req.Typed(), want)
		}
	}
	e, err := DecodeRequest(strings.NewReader(`{"op":"edit","path":"x","escalate":"danger-full-access","edit":{"edits":[{"old":"a","new":"b"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Typed().(request.Edit); got.Path != "x" {
		t.Errorf("edit: typed %+v", got)
	}
	for _, r := range []request.Request{want, request.Edit{Path: "x", Edits: []fsops.Replacement{{Old: "a", New: "b"}}},
		request.Edit{Paths: []string{"a", "src/**/*.go"}, Edits: []fsops.Replacement{{Old: "a", New: "b", ReplaceAll: true}}}, request.Patch{Patch: []byte("x"), DryRun: true},
		request.Mkdir{Path: "d", Parents: true}, request.Move{Source: "a", Destination: "b", DryRun: true}, request.Remove{Path: "x"}} {
		req := Carrying(r)
		req.Escalate = "danger-full-access"
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRequest(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if back.Op != r.Op() || !reflect.DeepEqual(back.Typed(), r) {
			t.Errorf("Carrying(%+v) came back as %+v", r, back.Typed())
		}
	}
	if err := Carrying(request.Read{Path: "x"}).Check(); err == nil {
		t.Error("Carrying a read gave a request Check takes")
	}
}

// The approver channel carries one question and its answer each way.
func TestAskSupervisor(t *testing.T) {
	for _, refuse := range []string{"", "not approved at the supervisor's terminal"} {
		mine, theirs, err := NewBroker()
		if err != nil {
			t.Fatal(err)
		}
		go AnswerAsks(mine, func(a Ask) error {
			if a.DiffText != "+x" {
				t.Errorf("ask carried diff %q", a.DiffText)
			}
			if refuse != "" {
				return errString(refuse)
			}
			return nil
		})
		err = AskSupervisor(int(theirs.Fd()), Ask{DiffText: "+x"})
		if (err == nil) != (refuse == "") || (err != nil && err.Error() != refuse) {
			t.Errorf("refuse %q: AskSupervisor = %v", refuse, err)
		}
		mine.Close()
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// An approver channel counts only when the supervisor named by the
// record, by its pid and its start time, made its other end.
func TestCheckApprover(t *testing.T) {
	mine, theirs, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	defer theirs.Close()
	start, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckApprover(int(theirs.Fd()), &Record{Supervisor: os.Getpid(), SupervisorStart: start}); err != nil {
		t.Errorf("the supervisor's own channel: %v", err)
	}
	for _, r := range []Record{
		{Supervisor: os.Getpid() + 1, SupervisorStart: start},
		{Supervisor: 0},
		// The pid of a supervisor that is gone, now another process's.
		{Supervisor: os.Getpid(), SupervisorStart: start - 1},
		{Supervisor: os.Getpid()},
	} {
		if err := CheckApprover(int(theirs.Fd()), &r); err == nil {
			t.Errorf("a channel made by another process passed as the supervisor %+v's", r)
		}
	}
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if err := CheckApprover(int(r.Fd()), &Record{Supervisor: os.Getpid(), SupervisorStart: start}); err == nil {
		t.Error("a pipe passed as an approver channel")
	}
}

// StartTime reads field 22 of /proc/PID/stat, after a command name that
// may hold spaces and parentheses: this process's start is after boot
// and no later than its child's.
func TestStartTime(t *testing.T) {
	self, err := StartTime(os.Getpid())
	if err != nil || self == 0 {
		t.Fatalf("StartTime(self) = %d, %v", self, err)
	}
	dir := t.TempDir()
	odd := filepath.Join(dir, "a b) (c")
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(odd, "5")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	child, err := StartTime(c.Process.Pid)
	if err != nil || child < self {
		t.Errorf("StartTime(child) = %d, %v; self %d", child, err, self)
	}
	if _, err := StartTime(1 << 30); err == nil {
		t.Error("StartTime of a pid no process has: no error")
	}
}
