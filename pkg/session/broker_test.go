package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Requests from many callers sharing the one inherited end each get their
// own reply, and the streams they hand over are the ones the handler
// writes to.
func TestBrokerRepliesToEachCaller(t *testing.T) {
	sup, shell, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	stop := Serve(sup, func(req Request, stdio [3]*os.File) Reply {
		stdio[1].WriteString(strings.Join(req.Args, " ") + "\n")
		return Reply{Status: len(req.Args)}
	})
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			r, w, _ := os.Pipe()
			defer r.Close()
			args := strings.Fields(strings.Repeat("x ", n))
			rep, err := Forward(int(shell.Fd()), Request{Args: args}, [3]*os.File{os.Stdin, w, os.Stderr})
			w.Close()
			if err != nil || rep.Status != n {
				t.Errorf("caller %d: reply %+v, %v", n, rep, err)
				return
			}
			out := make([]byte, 64)
			k, _ := r.Read(out)
			if got := strings.TrimSpace(string(out[:k])); got != strings.Join(args, " ") {
				t.Errorf("caller %d: its stdout got %q", n, got)
			}
		}(i)
	}
	wg.Wait()
	stop()
}

// A supervisor that is gone, or a descriptor that is not its channel, is
// an error for the caller, never a silent success.
func TestForwardWithoutSupervisor(t *testing.T) {
	sup, shell, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	sup.Close()
	stdio := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	if _, err := Forward(int(shell.Fd()), Request{Args: []string{"write"}}, stdio); err == nil {
		t.Error("Forward to a closed supervisor succeeded")
	}
	shell.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if _, err := Forward(int(r.Fd()), Request{}, stdio); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Forward over a pipe = %v, want not a socket", err)
	}
	if _, err := EnvFD("1"); err == nil {
		t.Error("EnvFD(1) accepted a standard stream")
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
