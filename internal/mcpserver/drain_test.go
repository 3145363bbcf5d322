package mcpserver

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeConn is a connection whose input is msgs, then io.EOF; what is
// written to it is recorded.
type fakeConn struct {
	msgs    []jsonrpc.Message
	written []jsonrpc.Message
}

func (f *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(f.msgs) == 0 {
		return nil, io.EOF
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	return m, nil
}

func (f *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	f.written = append(f.written, m)
	return nil
}

func (*fakeConn) Close() error      { return nil }
func (*fakeConn) SessionID() string { return "" }

type fakeTransport struct{ c *fakeConn }

func (f fakeTransport) Connect(context.Context) (mcp.Connection, error) { return f.c, nil }

func id(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	i, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// readAsync is c.Read in a goroutine: its result arrives on the channel.
func readAsync(c mcp.Connection) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	return done
}

// TestDrainHoldsTheEndUntilAnswered: the end of input reaches the SDK
// only once each request read has been answered; a notification needs no
// answer; a request of the server asked after the end is answered with
// errInputClosed at once.
func TestDrainHoldsTheEndUntilAnswered(t *testing.T) {
	ctx := context.Background()
	inner := &fakeConn{msgs: []jsonrpc.Message{
		&jsonrpc.Request{ID: id(t, float64(1)), Method: "tools/call"},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Request{ID: id(t, "two"), Method: "tools/list"},
	}}
	c, err := drainTransport{fakeTransport{inner}}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	done := readAsync(c)
	select {
	case err := <-done:
		t.Fatalf("the end reached the SDK with two requests unanswered: %v", err)
	case <-time.After(50 * time.Millisecond):
	}

	// The server asks the client (roots/list) while the end waits.
	if err := c.Write(ctx, &jsonrpc.Request{ID: id(t, float64(7)), Method: "roots/list"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the end, a request of the server: %v", err)
	}
	// That Read gave the answer to roots/list; read it again to see it.
	c.Write(ctx, &jsonrpc.Request{ID: id(t, float64(8)), Method: "roots/list"})
	msg, err := c.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); err != nil || !ok || resp.ID != id(t, float64(8)) || !errors.Is(resp.Error, errInputClosed) {
		t.Fatalf("the server's request after the end: %#v, %v", msg, err)
	}

	c.Write(ctx, &jsonrpc.Response{ID: id(t, float64(1))})
	done = readAsync(c)
	select {
	case err := <-done:
		t.Fatalf("the end reached the SDK with tools/list unanswered: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.Write(ctx, &jsonrpc.Response{ID: id(t, "two")})
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("after every answer: %v, want io.EOF", err)
	}
	if len(inner.written) != 4 {
		t.Errorf("%d messages written, want 4", len(inner.written))
	}
}

// TestDrainCloseEndsTheWait: a connection the SDK closes (a signal, a
// broken output) ends a Read that waits for answers.
func TestDrainCloseEndsTheWait(t *testing.T) {
	ctx := context.Background()
	inner := &fakeConn{msgs: []jsonrpc.Message{&jsonrpc.Request{ID: id(t, float64(1)), Method: "tools/call"}}}
	c, _ := drainTransport{fakeTransport{inner}}.Connect(ctx)
	if _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	done := readAsync(c)
	c.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("Read after Close: %v, want io.EOF", err)
	}
}
