//go:build unix

package tty

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// StderrRelay stands between CMD and exec's standard error when that is
// a pipe (a harness reading the agent's commands), copying each read at
// once through a LineScanner (docs/design.md §10, "A refusal in the
// shell explains itself"); with 2>&1 both streams share its one pipe, so
// their lines keep their order. A file, a terminal or /dev/null is never
// relayed. When the reader goes away the relay closes its end, so CMD's
// next write fails with EPIPE; it ends when every process of the session
// has closed its end of the pipe.
type StderrRelay struct {
	r, w *os.File
	out  int // a descriptor of exec's stream of the relay's own
	// Scanner reads what is copied; set before Start.
	Scanner LineScanner
	closing sync.Once
	done    chan struct{}
	started bool
}

// IsPipe reports whether f is open on a pipe (a FIFO).
func IsPipe(f *os.File) bool {
	var st unix.Stat_t
	return f != nil && unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// SameFile reports whether a and b are open on the same file.
func SameFile(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	return a != nil && b != nil && unix.Fstat(int(a.Fd()), &sa) == nil && unix.Fstat(int(b.Fd()), &sb) == nil &&
		sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// OpenStderr readies the relay of stream, exec's standard error, when it
// is a pipe; nil, nil when it is not. CMD gets Writer in its place.
func OpenStderr(stream *os.File) (*StderrRelay, error) {
	if !IsPipe(stream) {
		return nil, nil
	}
	// A descriptor of its own: a broken pipe on descriptor 2 would kill
	// the supervisor (the Go runtime raises SIGPIPE for 1 and 2 only).
	out, err := unix.FcntlInt(stream.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(out)
		return nil, err
	}
	return &StderrRelay{r: r, w: w, out: out, done: make(chan struct{})}, nil
}

// Writer is CMD's end of the relay.
func (s *StderrRelay) Writer() *os.File { return s.w }

// Start starts copying, once CMD holds Writer: it closes this process's
// copy, so the relay sees the session's end.
func (s *StderrRelay) Start() {
	s.started = true
	s.w.Close()
	go s.copy()
}

func (s *StderrRelay) copy() {
	defer close(s.done)
	buf := make([]byte, 32<<10)
	write := func(b []byte) error { return writeAll(s.out, b) }
	for {
		n, err := s.r.Read(buf)
		if n > 0 && s.Scanner.Copy(buf[:n], write) != nil {
			// The reader is gone: CMD's next write fails as it would
			// have without the relay.
			s.r.Close()
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.r.Close()
			}
			return
		}
	}
}

// Close ends the relay once CMD ended: it copies what the session wrote
// last, until every process of the session closed its end, or for at most
// drainMax when one left behind holds it; then it closes its own end. A
// relay never started is only released.
func (s *StderrRelay) Close() {
	if !s.started {
		s.closing.Do(func() {
			s.r.Close()
			s.w.Close()
			unix.Close(s.out)
		})
		return
	}
	s.closing.Do(func() {
		select {
		case <-s.done:
		case <-time.After(drainMax):
			s.r.Close()
			<-s.done
		}
		s.r.Close()
		unix.Close(s.out)
	})
}
