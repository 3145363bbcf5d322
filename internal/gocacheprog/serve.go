//go:build unix

package gocacheprog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// The protocol's commands this program knows.
const (
	cmdGet   = "get"
	cmdPut   = "put"
	cmdClose = "close"
)

// request is the go command's message (cacheprog.Request).
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// Serve answers the go command's requests read from in on out, for the
// cache folder dir (absolute), until it asks to close or in ends. The
// go command may have many requests in flight and matches the answers
// by ID, in any order: a request read while the next one is already
// waiting in the input is answered by a goroutine of its own, so that
// the requests a build asks together are answered together; answers
// are written whole, one at a time, and flushed when no other answer
// waits to be written. A close is answered after every request before
// it, and nothing is read after it.
func Serve(in io.Reader, out io.Writer, dir string) error {
	c, err := openCache(dir)
	if err != nil {
		return err
	}
	defer c.close()
	s := &server{c: c, w: bufio.NewWriterSize(out, 64<<10)}
	s.answer(&response{KnownCommands: []string{cmdGet, cmdPut, cmdClose}})
	err = s.loop(json.NewDecoder(bufio.NewReaderSize(in, 64<<10)))
	s.wg.Wait()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// server is one Serve: the cache and the answers' writer.
type server struct {
	c  *cache
	wg sync.WaitGroup // the requests being answered by goroutines

	// waiting counts the answers that want mu: the one that brings it
	// back to zero, having written its answer, flushes.
	waiting atomic.Int32
	mu      sync.Mutex // guards w, buf and err
	w       *bufio.Writer
	buf     []byte
	err     error // the first write error; nothing is written after it
}

// loop reads and dispatches requests until a close, the end of the
// input or an input that is not the protocol.
func (s *server) loop(dec *json.Decoder) error {
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var body []byte
		if req.Command == cmdPut && req.BodySize > 0 {
			// The body follows as a base64 JSON string.
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("the body of request %d: %w", req.ID, err)
			}
			if int64(len(body)) != req.BodySize {
				return fmt.Errorf("the body of request %d: %d bytes, want %d", req.ID, len(body), req.BodySize)
			}
		}
		switch {
		case req.Command == cmdClose:
			s.wg.Wait()
			s.answer(&response{ID: req.ID})
			return nil
		case more(dec):
			// Another request is already here: answer this one beside it.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.answer(s.handle(&req, body))
			}()
		default:
			s.answer(s.handle(&req, body))
		}
	}
}

// handle answers req (with its body, for a put).
func (s *server) handle(req *request, body []byte) *response {
	var res response
	switch req.Command {
	case cmdGet:
		res = s.c.get(req.ActionID)
	case cmdPut:
		res = s.c.put(req.ActionID, req.OutputID, body)
	default:
		res.Err = "unknown command " + strconv.Quote(req.Command)
	}
	res.ID = req.ID
	return &res
}

// answer writes res, and flushes unless another answer waits to be
// written after it.
func (s *server) answer(res *response) {
	s.waiting.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = appendResponse(s.buf[:0], res)
	if s.err == nil {
		_, s.err = s.w.Write(s.buf)
	}
	if s.waiting.Add(-1) == 0 && s.err == nil {
		s.err = s.w.Flush()
	}
}

// more says whether dec holds the start of another value already read,
// without reading more.
func more(dec *json.Decoder) bool {
	r := dec.Buffered()
	var b [1]byte
	for {
		if n, _ := r.Read(b[:]); n == 0 {
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
		default:
			return true
		}
	}
}
