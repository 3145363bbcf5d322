//go:build unix

// Package tty gives a dsh-fs exec session a terminal of its own: a new
// pseudo-terminal that the session holds instead of the person's, and a
// relay between the two that the supervisor alone controls
// (docs/design.md §10). Nothing the session does reaches the person's
// terminal but what the relay copies, and of that only what its Filter
// passes (no clipboard, no query the terminal answers, nothing beyond the
// screen); the supervisor's question takes the screen (DrawQuestion), and
// what the session set ends with it (Filter.End). The session cannot push
// input into the person's terminal (TIOCSTI), take its foreground, or
// read what the person types while the supervisor asks a question.
package tty

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is open on a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), getModes)
	return err == nil
}

// FlushInput discards what was typed into the terminal f and not read
// yet, so that it cannot answer a question asked next.
func FlushInput(f *os.File) { flushInput(int(f.Fd())) }

// Relay copies between the person's terminal and a session's
// pseudo-terminal: what the person types goes to the session, what the
// session writes comes to the person. It puts the person's terminal in
// raw mode while it relays input (the session's own terminal does the
// line editing, ^C and echo) and restores it on Close, whatever ended the
// session.
type Relay struct {
	// in is the person's terminal when exec's standard input is it
	// (input is relayed); nil when only output is.
	in *os.File
	// out is where the session's output goes: the person's terminal.
	out *os.File
	// ownOut says out was opened here and is closed with the relay.
	ownOut bool
	master *os.File
	slave  *os.File
	// saved are the person's terminal's modes before the relay, put
	// back on Close and while a question is asked.
	saved *unix.Termios
	raw   bool

	mfd, ofd, ifd int
	wakeR, wakeW  int

	// filter is what passes of the session's output (Filter); the
	// loop alone uses it.
	filter Filter
	out1   []byte // the filter's output, reused
	// Scanner reads what passes the filter, and may add a line after a
	// refusal (LineScanner); set before Start.
	Scanner LineScanner

	// mu is held by a Pause until its resume, and by Start: one
	// question at a time, and a relay that starts only between them.
	// started says Start ran (under mu).
	mu      sync.Mutex
	started bool
	paused  chan struct{}
	resume  chan struct{}
	stopped chan struct{}
	stop    chan struct{}
	closing sync.Once
}

// Open makes a session's pseudo-terminal for the person's terminal
// among exec's standard streams: stdin when it is a terminal (input is
// relayed then), else stdout or stderr (output only). The new terminal
// starts with the person's terminal's modes and window size. It returns
// nil, nil when none of the streams is a terminal: the session gets them
// as they are.
func Open(stdin, stdout, stderr *os.File) (*Relay, error) {
	r, err := Prepare(stdin, stdout, stderr)
	if r == nil || err != nil {
		return r, err
	}
	if r.master, r.slave, err = pty.Open(); err != nil {
		r.closeFiles()
		return nil, fmt.Errorf("pseudo-terminal: %w", err)
	}
	// The session's terminal behaves as the person's did: same erase
	// and interrupt characters, same echo, same size.
	unix.IoctlSetTermios(int(r.slave.Fd()), setModes, r.saved)
	r.Resize()
	return r, nil
}

// Prepare is Open for a session that makes its pseudo-terminal itself,
// in a devpts of its own (OpenTerminal, with Modes): it makes none, and
// the session's master comes with Attach, before Start.
func Prepare(stdin, stdout, stderr *os.File) (*Relay, error) {
	var person *os.File
	for _, f := range []*os.File{stdin, stdout, stderr} {
		if IsTerminal(f) {
			person = f
			break
		}
	}
	if person == nil {
		return nil, nil
	}
	r := &Relay{ifd: -1, wakeR: -1, wakeW: -1}
	if person == stdin {
		r.in = stdin
	}
	var err error
	if r.out, r.ownOut, err = writerOf(person, stdout, stderr); err != nil {
		return nil, err
	}
	saved, err := unix.IoctlGetTermios(int(person.Fd()), getModes)
	if err != nil {
		r.closeFiles()
		return nil, fmt.Errorf("terminal modes: %w", err)
	}
	r.saved = saved
	return r, nil
}

// Modes are the modes and window size of the person's terminal, which
// the session's terminal starts with.
func (r *Relay) Modes() Modes {
	m := Modes{Termios: *r.saved}
	if ws, err := unix.IoctlGetWinsize(int(r.person().Fd()), unix.TIOCGWINSZ); err == nil {
		m.Size = *ws
	}
	return m
}

// Attach gives a prepared relay the session's master, made in the
// session (OpenTerminal).
func (r *Relay) Attach(master *os.File) { r.master = master }

// person is a descriptor of the person's terminal: the one read when
// input is relayed, else the one written.
func (r *Relay) person() *os.File {
	if r.in != nil {
		return r.in
	}
	return r.out
}

// writerOf returns a descriptor that writes to the terminal person: stdout
// or stderr when either is open on the same terminal, else a new one
// (person may be open for reading only).
func writerOf(person, stdout, stderr *os.File) (*os.File, bool, error) {
	var pst unix.Stat_t
	if err := unix.Fstat(int(person.Fd()), &pst); err != nil {
		return nil, false, err
	}
	for _, f := range []*os.File{stdout, stderr} {
		var st unix.Stat_t
		if f != nil && unix.Fstat(int(f.Fd()), &st) == nil && st.Rdev == pst.Rdev && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			if mode, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err == nil && mode&unix.O_ACCMODE != unix.O_RDONLY {
				return f, false, nil
			}
		}
	}
	f, err := reopenForWriting(person)
	if err != nil {
		return nil, false, fmt.Errorf("the terminal cannot be written: %w", err)
	}
	return f, true, nil
}

// Slave is the session's side of the pseudo-terminal: the child's
// controlling terminal and the streams that were terminals. The caller
// closes its own copy once the child started (Started).
func (r *Relay) Slave() *os.File { return r.slave }

// Start starts relaying, once the child holds the slave: it closes this
// process's copy of the slave, so the relay sees the session's end, puts
// the person's terminal in raw mode when input is relayed, and copies in
// the background until Close.
func (r *Relay) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slave != nil {
		r.slave.Close()
	}
	r.mfd, r.ofd = int(r.master.Fd()), int(r.out.Fd())
	if err := unix.SetNonblock(r.mfd, true); err != nil {
		return err
	}
	var p [2]int
	if err := pipeNonblock(p[:]); err != nil {
		return err
	}
	r.wakeR, r.wakeW = p[0], p[1]
	if r.in != nil {
		r.ifd = int(r.in.Fd())
		if err := r.makeRaw(); err != nil {
			return err
		}
	}
	r.paused, r.resume = make(chan struct{}), make(chan struct{})
	r.stop, r.stopped = make(chan struct{}), make(chan struct{})
	r.started = true
	go r.loop()
	return nil
}

// makeRaw puts the person's terminal in raw mode, as cfmakeraw does:
// every byte typed goes to the session as it is, ^C and ^Z included.
func (r *Relay) makeRaw() error {
	t := *r.saved
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(r.ifd, setModes, &t); err != nil {
		return fmt.Errorf("raw mode: %w", err)
	}
	r.raw = true
	return nil
}

// restore puts the person's terminal's own modes back.
func (r *Relay) restore() {
	if r.raw {
		unix.IoctlSetTermios(r.ifd, setModes, r.saved)
		r.raw = false
	}
}

// Resize copies the person's terminal's window size to the session's;
// the kernel then sends SIGWINCH to the session's foreground.
func (r *Relay) Resize() {
	if ws, err := pty.GetsizeFull(r.person()); err == nil {
		pty.Setsize(r.master, ws)
	}
}

// maxPending bounds the input read from the person and not yet taken by
// the session; past it the relay stops reading the person's terminal.
const maxPending = 64 << 10

// loop relays until Close. One goroutine does all of it, so that when it
// acknowledges a pause nothing is in flight in either direction.
func (r *Relay) loop() {
	defer close(r.stopped)
	buf := make([]byte, 32<<10)
	var pending []byte
	outBroken := false
	for {
		fds := []unix.PollFd{{Fd: int32(r.wakeR), Events: unix.POLLIN}, {Fd: int32(r.mfd), Events: unix.POLLIN}}
		if len(pending) > 0 {
			fds[1].Events |= unix.POLLOUT
		}
		if r.ifd >= 0 && len(pending) < maxPending {
			fds = append(fds, unix.PollFd{Fd: int32(r.ifd), Events: unix.POLLIN})
		}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[0].Revents != 0 {
			var cmds [16]byte
			n, _ := unix.Read(r.wakeR, cmds[:])
			for _, c := range cmds[:max(n, 0)] {
				switch c {
				case wakeStop:
					r.drain(buf, outBroken)
					return
				case wakePause:
					r.paused <- struct{}{}
					<-r.resume
				}
			}
			continue
		}
		if fds[1].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
			n, err := unix.Read(r.mfd, buf)
			if n > 0 {
				outBroken = r.output(outBroken, buf[:n])
				if a := r.filter.Replies(); len(pending)+len(a) <= maxPending {
					pending = append(pending, a...)
				}
			}
			if n <= 0 && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				// Every process of the session closed its terminal
				// (EIO): nothing more will come.
				r.waitStop()
				return
			}
		}
		if fds[1].Revents&unix.POLLOUT != 0 && len(pending) > 0 {
			n, err := unix.Write(r.mfd, pending)
			if n > 0 {
				pending = pending[n:]
			} else if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				pending = nil
			}
		}
		if len(fds) > 2 && fds[2].Revents != 0 {
			n, err := unix.Read(r.ifd, buf)
			if n > 0 {
				pending = append(pending, buf[:n]...)
			} else if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				// The person's terminal is gone (hung up): stop
				// reading it; the session's output still drains.
				r.ifd = -1
			}
		}
	}
}

// waitStop parks the loop once the session closed its terminal, still
// answering pauses, until Close.
func (r *Relay) waitStop() {
	for {
		select {
		case <-r.stop:
			return
		case r.paused <- struct{}{}:
			<-r.resume
		}
	}
}

// drainQuiet is how long the relay waits for more output from a session
// that ended before it closes the session's terminal; drainMax bounds the
// whole drain, so a process left behind that keeps writing cannot hold
// exec.
const (
	drainQuiet = 20 * time.Millisecond
	drainMax   = 500 * time.Millisecond
)

// drain copies what the session wrote last, until its terminal is closed
// by all, quiet for drainQuiet, or drainMax passed.
func (r *Relay) drain(buf []byte, outBroken bool) {
	end := time.Now().Add(drainMax)
	for time.Now().Before(end) {
		fds := []unix.PollFd{{Fd: int32(r.mfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(drainQuiet/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		m, err := unix.Read(r.mfd, buf)
		if m <= 0 && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return
		}
		if m > 0 {
			outBroken = r.output(outBroken, buf[:m])
		}
	}
}

// output writes what the filter passes of p, the session's output, to
// the person's terminal, unless writing it failed before (broken); it
// returns whether writing failed.
func (r *Relay) output(broken bool, p []byte) bool {
	r.out1 = r.filter.Write(r.out1[:0], p)
	if broken || len(r.out1) == 0 {
		return broken
	}
	return r.Scanner.Copy(r.out1, func(b []byte) error { return writeAll(r.ofd, b) }) != nil
}

// Foreground is the process group in the foreground of the session's
// terminal, 0 when it cannot be read; only once started.
func (r *Relay) Foreground() int {
	if r.stop == nil {
		return 0
	}
	pg, err := unix.IoctlGetInt(r.mfd, unix.TIOCGPGRP)
	if err != nil {
		return 0
	}
	return pg
}

// writeAll writes b to the blocking descriptor fd.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				if errors.Is(err, unix.EAGAIN) {
					unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, 100)
				}
				continue
			}
			return err
		}
		b = b[n:]
	}
	return nil
}

// The loop's commands, written to its wake pipe.
const (
	wakePause = 'p'
	wakeStop  = 's'
)

// wake interrupts the loop's poll with the command c.
func (r *Relay) wake(c byte) { unix.Write(r.wakeW, []byte{c}) }

// Pause stops the relay both ways and hands the person's terminal to the
// caller in its own (cooked) modes, with input typed before and not yet
// relayed discarded: nothing the session writes can hide, imitate or
// answer what the caller asks. The caller takes the screen with
// DrawQuestion. It returns the terminal to read from (nil when exec's
// standard input is not the terminal) and to write to, and a function
// that resumes the relay. One Pause at a time. Before Start nothing is
// relayed and the terminal is in its own modes: it is handed over as it
// is, and a Start waits for the resume.
func (r *Relay) Pause() (in, out *os.File, resume func()) {
	r.mu.Lock()
	if !r.started {
		if r.in != nil {
			flushInput(r.ifd0())
		}
		return r.in, r.out, r.mu.Unlock
	}
	r.wake(wakePause)
	select {
	case <-r.paused:
	case <-r.stopped:
	}
	r.restore()
	if r.in != nil {
		flushInput(r.ifd0())
	}
	return r.in, r.out, func() {
		if r.in != nil {
			r.makeRaw()
		}
		select {
		case r.resume <- struct{}{}:
		case <-r.stopped:
		}
		r.mu.Unlock()
	}
}

// ifd0 is the person's terminal's descriptor for input, even once the
// loop stopped reading it.
func (r *Relay) ifd0() int { return int(r.in.Fd()) }

// Close ends the relay once the session's command ended: it copies what
// the session wrote last, resets what it set on the person's terminal
// (Filter.End), closes the session's terminal (a process left
// behind that holds it gets a hang-up and EIO), and puts the person's
// terminal back in its own modes.
func (r *Relay) Close() {
	r.closing.Do(func() {
		if r.stop != nil {
			close(r.stop)
			r.wake(wakeStop)
			<-r.stopped
			// What the session set on the person's terminal ends
			// with it.
			writeAll(r.ofd, r.filter.End())
		}
		r.restore()
		r.closeFiles()
	})
}

func (r *Relay) closeFiles() {
	if r.master != nil {
		r.master.Close()
	}
	if r.slave != nil {
		r.slave.Close()
	}
	if r.ownOut && r.out != nil {
		r.out.Close()
	}
	for _, fd := range []int{r.wakeR, r.wakeW} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
