package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/memo"
)

// TestDecodeMemo: a recall carries a hash alone, and no call, and asks
// to escalate nothing; a remember never comes as a request (Remember
// sends a sealed memfd); a memo rides on nothing else.
func TestDecodeMemo(t *testing.T) {
	sum := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"remember as a request", `{"op":"remember","escalate":"","dir":"","memo":{"content":"aGk="}}`, false},
		{"remember empty", `{"op":"remember","escalate":"","dir":"","memo":{}}`, false},
		{"recall", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"` + sum + `"}}`, true},
		{"remember without memo", `{"op":"remember","escalate":"","dir":""}`, false},
		{"remember under a hash of the sender's", `{"op":"remember","escalate":"","dir":"","memo":{"sha256":"` + sum + `","content":"aGk="}}`, false},
		{"recall with content", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"` + sum + `","content":"aGk="}}`, false},
		{"recall of no hash", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"../x"}}`, false},
		{"remember that escalates", `{"op":"remember","escalate":"danger-full-access","dir":"","memo":{"content":"aGk="}}`, false},
		{"remember with a write", `{"op":"remember","escalate":"","dir":"","memo":{"content":"aGk="},"write":{"path":"x","content":"aGk="}}`, false},
		{"a write with a memo", `{"op":"write","escalate":"danger-full-access","dir":"/","write":{"path":"x","content":"aGk="},"memo":{"content":"aGk="}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(tc.body))
			if (err == nil) != tc.ok {
				t.Errorf("DecodeRequest: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// memoLog is a handle that keeps what it was handed: each remember's
// content, and a recall's answer the last content remembered.
type memoLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *memoLog) handle(req Request) Reply {
	l.mu.Lock()
	defer l.mu.Unlock()
	if req.Op == OpRemember {
		l.seen = append(l.seen, string(req.Memo.Content))
		return Reply{}
	}
	if len(l.seen) == 0 {
		return Reply{}
	}
	return Reply{Content: []byte(l.seen[len(l.seen)-1])}
}

// servedMemo is a session's channel whose supervisor's end a memoLog
// serves: the shell's end, and the log. Both end with the test.
func servedMemo(t *testing.T) (*os.File, *memoLog) {
	t.Helper()
	sup, sh, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	l := &memoLog{}
	stop := Serve(sup, l.handle)
	t.Cleanup(func() {
		stop()
		sh.Close()
	})
	return sh, l
}

func (l *memoLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// TestRememberThenRecall: a remember waits for no reply, yet a recall
// sent after it, the next call's, finds it: the channel keeps its
// messages in order and the supervisor takes a remember before the next
// message. Run many times, as the read and the write of an agent follow
// each other at once.
func TestRememberThenRecall(t *testing.T) {
	sh, _ := servedMemo(t)
	fd := int(sh.Fd())
	for i := range 200 {
		content := fmt.Sprintf("read %d\n", i)
		if err := Remember(fd, []byte(content)); err != nil {
			t.Fatalf("remember %d: %v", i, err)
		}
		got, err := Recall(fd, strings.Repeat("a", 64))
		if err != nil || string(got) != content {
			t.Fatalf("recall right after remember %d: %q, %v", i, got, err)
		}
	}
}

// TestRememberNeverBlocks: a supervisor that reads nothing (slow, or
// stopped) never holds a read up: once the channel's queue is full a
// remember fails at once, and nothing is remembered. Before, a remember
// waited for the supervisor's reply.
func TestRememberNeverBlocks(t *testing.T) {
	sup, sh, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	defer sh.Close()
	done := make(chan error, 1)
	go func() {
		for range 10000 {
			if err := Remember(int(sh.Fd()), []byte("content\n")); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if !errors.Is(err, unix.EAGAIN) {
			t.Errorf("10,000 remembers to a supervisor that reads none: %v, want EAGAIN once its queue is full", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a remember blocked on a supervisor that reads nothing")
	}
}

// TestRememberRefusesOtherFiles: what comes behind a remember's mark must
// be a sealed memfd of at most memo.ItemMax bytes; anything else (a pipe
// whose read would block the channel's reader for ever, a file on disk
// or a memfd that can still change, one too large) is dropped without
// reaching the handle, and the channel still answers the next request.
func TestRememberRefusesOtherFiles(t *testing.T) {
	sh, l := servedMemo(t)
	sealed := func(size int, seals int) int {
		fd, err := unix.MemfdCreate("t", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			t.Fatal(err)
		}
		if seals != 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
				t.Fatal(err)
			}
		}
		return fd
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	disk, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	for _, tc := range []struct {
		name string
		fd   int
	}{
		{"a pipe", p[0]},
		{"a file on disk", int(disk.Fd())},
		{"an unsealed memfd", sealed(8, 0)},
		{"a memfd that can still grow", sealed(8, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK)},
		{"a memfd over the bound", sealed(memo.ItemMax+1, memoSeals)},
	} {
		if err := unix.Sendmsg(int(sh.Fd()), []byte{memoMark}, unix.UnixRights(tc.fd), nil, 0); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := Recall(int(sh.Fd()), strings.Repeat("a", 64)); err != nil {
			t.Fatalf("after %s the channel answers no more: %v", tc.name, err)
		}
		if n := l.count(); n != 0 {
			t.Fatalf("%s was remembered", tc.name)
		}
	}
	if err := Remember(int(sh.Fd()), make([]byte, memo.ItemMax)); err != nil {
		t.Fatal(err)
	}
	if _, err := Recall(int(sh.Fd()), strings.Repeat("a", 64)); err != nil || l.count() != 1 {
		t.Errorf("a remember of memo.ItemMax bytes was not taken: %v", err)
	}
}

// TestRememberWhileNoFDFree: a remember and a recall sent while the
// supervisor's process can take no more descriptors (at its
// RLIMIT_NOFILE, as a process busy with many files is) wait in the
// channel until it can, and are then taken in order: the recall finds
// the remember. The kernel delivers such a message without its
// descriptor (MSG_CTRUNC) and closes it; before, the reader took the
// message so and dropped it, so the remember was lost though Remember
// had said it was sent, and the recall's reply socket with it.
func TestRememberWhileNoFDFree(t *testing.T) {
	sup, sh, err := NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	fd, supFD := int(sh.Fd()), int(sup.Fd())
	const content = "read while the supervisor could take no descriptor\n"
	if err := Remember(fd, []byte(content)); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		got []byte
		err error
	}
	recalled := make(chan answer, 1)
	go func() {
		got, err := Recall(fd, strings.Repeat("a", 64))
		recalled <- answer{got, err}
	}()
	// Both messages queued (a byte each), the recall's reply socket made.
	queued := func() int {
		n, err := unix.IoctlGetInt(supFD, unix.SIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	// No descriptor free below the limit: the lowest free one is at it.
	free, err := unix.Dup(supFD)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(free)
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	restore := sync.OnceFunc(func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
			t.Fatal(err)
		}
	})
	defer restore()
	held := make(chan struct{}, 1)
	hold := func(time.Duration) (time.Duration, bool) {
		select {
		case held <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
		return time.Millisecond, true
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: uint64(free), Max: was.Max}); err != nil {
		t.Fatal(err)
	}
	var l memoLog
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(supFD, l.handle, hold)
	}()
	defer func() {
		unix.Shutdown(supFD, unix.SHUT_RDWR)
		<-done
		sup.Close()
	}()
	// Until the reader has met the messages: taken (the queue empty), or
	// held for want of a descriptor.
	for waiting := true; waiting; {
		select {
		case <-held:
			waiting = false
		default:
			waiting = queued() > 0
			time.Sleep(time.Millisecond)
		}
	}
	restore()
	a := <-recalled
	if a.err != nil || string(a.got) != content {
		t.Errorf("a recall after a remember, both sent while the supervisor could take no descriptor: %q, %v; want %q", a.got, a.err, content)
	}
	if n := l.count(); n != 1 {
		t.Errorf("%d remembers taken, want 1", n)
	}
}
