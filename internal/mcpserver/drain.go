package mcpserver

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every request read is answered before the server exits. A
// client that writes its requests and closes its end of the pipe (a
// script, `printf … | dsh-fs mcp`) ends the input while they run. The
// SDK's connection, told of the end, cancels every request in flight and
// refuses every answer after it: the client lost most of them, at times
// even initialize's. drainTransport stands between the SDK and the stdio
// transport: it holds the end of input back from the SDK until each
// request it read has been answered, and answers the server's own
// requests to the client (roots/list, elicitation), which can get no
// answer any more, with an error, so that no call waits for one.

// errInputClosed answers the server's requests to a client whose input
// ended: no answer can come.
var errInputClosed = errors.New("the client closed its input: no answer can come")

// drainTransport is t, with the end of its input held back until every
// request read from it has been answered.
type drainTransport struct{ t mcp.Transport }

func (d drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, calls: map[jsonrpc.ID]bool{}, asked: map[jsonrpc.ID]bool{},
		kick: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// drainConn is the connection of a drainTransport.
type drainConn struct {
	mcp.Connection

	mu sync.Mutex
	// calls are the client's requests read and not answered yet; asked
	// the server's requests to the client not answered yet.
	calls, asked map[jsonrpc.ID]bool
	// kick wakes a Read that waits for the answers (capacity 1).
	kick chan struct{}

	closeOnce sync.Once
	closed    chan struct{}

	// end is the input's end or failure, once read; only Read, which the
	// SDK calls from one goroutine, touches it.
	end error
}

// Read is the connection's next message. After the end of input, it
// gives an error answer to each request of the server still waiting for
// the client's, then waits until the server has answered every request
// of the client, and only then the end.
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.end == nil {
		msg, err := c.Connection.Read(ctx)
		switch {
		case err == nil:
			c.track(msg)
			return msg, nil
		case ctx.Err() != nil:
			return nil, err
		}
		c.end = err
	}
	for {
		c.mu.Lock()
		for id := range c.asked {
			delete(c.asked, id)
			c.mu.Unlock()
			return &jsonrpc.Response{ID: id, Error: errInputClosed}, nil
		}
		idle := len(c.calls) == 0
		c.mu.Unlock()
		if idle {
			return nil, c.end
		}
		select {
		case <-c.kick:
		case <-c.closed:
			return nil, c.end
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// track records a request of the client (to answer) or an answer to one
// of the server's.
func (c *drainConn) track(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			c.calls[m.ID] = true
		}
	case *jsonrpc.Response:
		delete(c.asked, m.ID)
	}
}

// Write writes msg. An answer, written or not (the client may be gone),
// takes its request off the list; a request of the server goes on its
// own.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, isReq := msg.(*jsonrpc.Request)
	if isReq && req.IsCall() {
		c.mu.Lock()
		c.asked[req.ID] = true
		c.mu.Unlock()
		c.wake()
	}
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		c.wake()
	}
	return err
}

func (c *drainConn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Close closes the connection, and ends a Read that waits for answers.
func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
