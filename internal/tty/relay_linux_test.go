package tty

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// person is a person's terminal for a test: keys types into it and
// screen is what it showed; term is the side exec has as its streams.
type person struct {
	keys *os.File
	term *os.File
	mu   sync.Mutex
	seen bytes.Buffer
}

func newPerson(t *testing.T) *person {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	p := &person{keys: master, term: slave}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *person) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// hangGuard bounds a wait for what must happen (bytes through a
// terminal, the relay's goroutines): milliseconds of work, given plenty
// for a loaded machine under -race. A relay that dropped them fails
// after it, one that delivered them passes however slowly.
const hangGuard = 20 * time.Second

// eventually waits until cond holds, for at most hangGuard.
func eventually(cond func() bool) bool {
	for end := time.Now().Add(hangGuard); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// openRelay opens a relay for p, not started, and returns it with the
// session's side of its terminal (a copy of the slave, as a child would
// hold it).
func openRelay(t *testing.T, p *person) (*Relay, *os.File) {
	t.Helper()
	r, err := Open(p.term, p.term, p.term)
	if err != nil || r == nil {
		t.Fatalf("Open: %v, %v", r, err)
	}
	fd, err := unix.Dup(int(r.Slave().Fd()))
	if err != nil {
		t.Fatal(err)
	}
	session := os.NewFile(uintptr(fd), "session")
	t.Cleanup(func() { session.Close(); r.Close() })
	return r, session
}

// startRelay is openRelay, started.
func startRelay(t *testing.T, p *person) (*Relay, *os.File) {
	t.Helper()
	r, session := openRelay(t, p)
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r, session
}

func TestOpenWithoutTerminal(t *testing.T) {
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	defer wr.Close()
	if r, err := Open(rd, wr, nil); r != nil || err != nil {
		t.Errorf("Open on pipes = %v, %v; want nil, nil", r, err)
	}
}

// TestRelayCopiesAndRestores: typed bytes reach the session as they are
// (the person's terminal in raw mode: no echo of its own, ^C a byte), the
// session's output reaches the person, and Close puts the person's modes
// back.
func TestRelayCopiesAndRestores(t *testing.T) {
	p := newPerson(t)
	before, err := unix.IoctlGetTermios(int(p.term.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	r, session := startRelay(t, p)
	raw, _ := unix.IoctlGetTermios(int(p.term.Fd()), unix.TCGETS)
	if raw.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
		t.Errorf("the person's terminal is not raw while relaying: lflag %#x", raw.Lflag)
	}
	// The session's terminal does its own line editing: put it raw
	// too, so ^C arrives as a byte to read here.
	s := *before
	s.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG
	unix.IoctlSetTermios(int(session.Fd()), unix.TCSETS, &s)
	p.keys.Write([]byte("ab\x03"))
	got := make([]byte, 0, 3)
	buf := make([]byte, 16)
	session.SetReadDeadline(time.Now().Add(hangGuard))
	for len(got) < 3 {
		n, err := session.Read(buf)
		if err != nil {
			t.Fatalf("the session read %q, then %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "ab\x03" {
		t.Errorf("the session read %q, want \"ab\\x03\"", got)
	}
	session.Write([]byte("from-session"))
	if !eventually(func() bool { return strings.Contains(p.screen(), "from-session") }) {
		t.Errorf("the person's terminal shows %q", p.screen())
	}
	r.Close()
	after, _ := unix.IoctlGetTermios(int(p.term.Fd()), unix.TCGETS)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("modes after Close: %+v, want %+v", after, before)
	}
}

// TestRelayPause: while paused, what the session writes does not reach
// the person's terminal, what the person typed before is discarded, and
// what the person types is read by the one who paused, in the person's
// own modes, never by the session; after resume both flow again.
func TestRelayPause(t *testing.T) {
	p := newPerson(t)
	r, session := startRelay(t, p)
	// Typed before the question, not yet taken by the session: the
	// relay holds it (the session does not read), or the person's
	// terminal does.
	in, out, resume := r.Pause()
	if in == nil || out == nil {
		t.Fatal("Pause handed over no terminal")
	}
	modes, _ := unix.IoctlGetTermios(int(in.Fd()), unix.TCGETS)
	if modes.Lflag&unix.ICANON == 0 {
		t.Errorf("paused, the person's terminal is not in its own (cooked) modes")
	}
	session.Write([]byte("FAKE-QUESTION"))
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(p.screen(), "FAKE-QUESTION") {
		t.Errorf("the session's output reached the person while paused: %q", p.screen())
	}
	out.WriteString("real question? ")
	p.keys.Write([]byte("y\n"))
	answer := make([]byte, 16)
	in.SetReadDeadline(time.Now().Add(hangGuard))
	n, err := in.Read(answer)
	if err != nil || string(answer[:n]) != "y\n" {
		t.Errorf("the asker read %q, %v; want the person's \"y\\n\"", answer[:n], err)
	}
	resume()
	if !eventually(func() bool { return strings.Contains(p.screen(), "FAKE-QUESTION") }) {
		t.Errorf("after resume the session's output does not flow: %q", p.screen())
	}
	// The answer was the asker's: the session reads only what comes
	// after the resume.
	p.keys.Write([]byte("z\n"))
	buf := make([]byte, 16)
	session.SetReadDeadline(time.Now().Add(hangGuard))
	m, err := session.Read(buf)
	if err != nil || strings.Contains(string(buf[:m]), "y") {
		t.Errorf("the session read %q, %v after the question", buf[:m], err)
	}
}

// TestRelayPauseDiscardsTypeAhead: what was typed before the question and
// not yet relayed does not answer it.
func TestRelayPauseDiscardsTypeAhead(t *testing.T) {
	p := newPerson(t)
	r, _ := startRelay(t, p)
	in, _, resume := r.Pause()
	defer resume()
	// Typed while the relay is paused but before the asker flushed: a
	// pushed or early "y".
	p.keys.Write([]byte("y\n"))
	// The flush must come after the "y" reached the terminal's input,
	// which the kernel does in the background: wait for the line there.
	if !eventually(func() bool { n, err := unix.IoctlGetInt(int(in.Fd()), unix.TIOCINQ); return err == nil && n >= 2 }) {
		t.Fatal("the typed \"y\\n\" never reached the person's terminal")
	}
	unix.IoctlSetInt(int(in.Fd()), unix.TCFLSH, unix.TCIFLUSH)
	p.keys.Write([]byte("n\n"))
	answer := make([]byte, 16)
	in.SetReadDeadline(time.Now().Add(hangGuard))
	n, _ := in.Read(answer)
	if string(answer[:n]) != "n\n" {
		t.Errorf("the asker read %q, want the answer typed after the flush", answer[:n])
	}
}

// TestRelayCloseHangsUp: what the session wrote last reaches the person,
// and a process that still holds the session's terminal after Close (one
// left behind) reads EOF or EIO, never the person's input.
func TestRelayCloseHangsUp(t *testing.T) {
	p := newPerson(t)
	r, session := startRelay(t, p)
	session.Write([]byte("last-words"))
	r.Close()
	if !strings.Contains(p.screen(), "last-words") && !eventually(func() bool { return strings.Contains(p.screen(), "last-words") }) {
		t.Errorf("the session's last output was lost: %q", p.screen())
	}
	p.keys.Write([]byte("secret\n"))
	buf := make([]byte, 16)
	n, err := session.Read(buf)
	if err == nil && n > 0 {
		t.Errorf("after Close the session's terminal still reads %q", buf[:n])
	}
}

// TestRelayFilters: the relay runs the session's output through its
// Filter: an OSC 52 the session writes never reaches the person's
// terminal, the text around it does, and a device-attributes query is
// answered by the relay on the session's input, not by the terminal.
func TestRelayFilters(t *testing.T) {
	p := newPerson(t)
	_, session := startRelay(t, p)
	session.Write([]byte("before\x1b]52;c;dG91Y2ggeA==\a after-1\r\n"))
	if !eventually(func() bool { return strings.Contains(p.screen(), "after-1") }) {
		t.Fatalf("the session's text did not reach the terminal: %q", p.screen())
	}
	if s := p.screen(); strings.Contains(s, "52;") || !strings.Contains(s, "before after-1") {
		t.Errorf("the terminal got %q", s)
	}
	// The session's terminal is cooked: its reads see the answer once
	// raw; read it from a raw copy of the modes.
	modes, _ := unix.IoctlGetTermios(int(session.Fd()), unix.TCGETS)
	raw := *modes
	raw.Lflag &^= unix.ICANON | unix.ECHO
	// A read waits for its first byte at most VTIME tenths of a
	// second: hangGuard's worth, for the relay's answer.
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 0, uint8(hangGuard/(100*time.Millisecond))
	unix.IoctlSetTermios(int(session.Fd()), unix.TCSETS, &raw)
	session.Write([]byte("\x1b[c"))
	var got []byte
	buf := make([]byte, 64)
	for len(got) < len(answerDA1) {
		n, _ := session.Read(buf)
		if n <= 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != answerDA1 {
		t.Errorf("the session read %q after CSI c, want the relay's %q", got, answerDA1)
	}
}

// TestRelayPauseBeforeStart: a question may come before the relay has
// started (exec's network proxy asks as soon as CMD's first request
// arrives, which can be before the supervisor starts relaying). Pause
// then hands over the person's terminal as it is, in its own modes, and
// a Start during the question waits for its end; after it the relay
// flows. Before: Pause woke a loop that did not exist (its wake pipe
// unset, descriptor 0) and waited on channels not made yet, for good;
// the question never showed (TestExecNetworkApproveAtTerminal hung).
func TestRelayPauseBeforeStart(t *testing.T) {
	p := newPerson(t)
	r, session := openRelay(t, p)

	type handed struct {
		in, out *os.File
		resume  func()
	}
	paused := make(chan handed, 1)
	go func() {
		in, out, resume := r.Pause()
		paused <- handed{in, out, resume}
	}()
	var h handed
	select {
	case h = <-paused:
	case <-time.After(hangGuard):
		t.Fatal("Pause before Start never returned")
	}
	if h.in == nil || h.out == nil {
		t.Fatal("Pause handed over no terminal")
	}
	if modes, _ := unix.IoctlGetTermios(int(h.in.Fd()), unix.TCGETS); modes == nil || modes.Lflag&unix.ICANON == 0 {
		t.Errorf("paused before Start, the person's terminal is not in its own (cooked) modes")
	}
	started := make(chan error, 1)
	go func() { started <- r.Start() }()
	h.out.WriteString("real question? ")
	p.keys.Write([]byte("y\n"))
	answer := make([]byte, 16)
	h.in.SetReadDeadline(time.Now().Add(hangGuard))
	if n, err := h.in.Read(answer); err != nil || string(answer[:n]) != "y\n" {
		t.Errorf("the asker read %q, %v; want the person's \"y\\n\"", answer[:n], err)
	}
	select {
	case err := <-started:
		t.Errorf("Start returned (%v) during the question: the relay would take the person's terminal from the asker", err)
	case <-time.After(100 * time.Millisecond):
	}
	h.resume()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Start after the question: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Start never returned after the question")
	}
	session.Write([]byte("AFTER-QUESTION"))
	if !eventually(func() bool { return strings.Contains(p.screen(), "AFTER-QUESTION") }) {
		t.Errorf("after the question the session's output does not flow: %q", p.screen())
	}
}
