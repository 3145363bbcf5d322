package mcpserver

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// MCP client roots (docs/design.md §5). A client that offers roots may
// narrow the allowed folders to the parts inside them, never widen them:
// they become the fence's Within. The official server replaces its
// folders with the client's roots; a client could then hand it "/".
//
// Roots are a server-to-client request, which the SDK refuses on protocol
// 2026-07-28 outside a multi-round-trip request (the feature is
// deprecated there): only clients on earlier protocols are asked.

// rootsWait bounds how long a tool call waits for the client's first
// list of roots.
const rootsWait = 10 * time.Second

// clientRoots is the latest list of roots the client gave.
type clientRoots struct {
	mu      sync.Mutex
	started bool
	ready   chan struct{} // closed once the first list is in, or failed
	list    []string      // canonical; nil until one was listed
}

func newClientRoots() *clientRoots { return &clientRoots{ready: make(chan struct{})} }

// offersRoots reports whether the client of ss offers roots on a protocol
// where the server may ask for them.
func offersRoots(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.RootsV2 != nil && ip.ProtocolVersion < "2026-07-28"
}

// within returns the Within of a call from the client of ss: nil when the
// client offers no roots; otherwise its roots, waiting for the first list,
// and an empty list (nothing writable) when none could be had: a client
// that offers roots and cannot list them gets nothing it did not list.
func (c *clientRoots) within(ss *mcp.ServerSession) []string {
	if !offersRoots(ss) {
		return nil
	}
	c.mu.Lock()
	if !c.started {
		c.started = true
		go c.refresh(ss)
	}
	c.mu.Unlock()
	select {
	case <-c.ready:
	case <-time.After(rootsWait):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list == nil {
		return []string{}
	}
	return c.list
}

// refresh asks the client for its roots and keeps them; a failure keeps
// the previous list (none at first).
func (c *clientRoots) refresh(ss *mcp.ServerSession) {
	defer c.markReady()
	ctx, cancel := context.WithTimeout(context.Background(), rootsWait)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return
	}
	list := []string{}
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue
		}
		if canon, err := sandbox.Canonical("/", u.Path); err == nil {
			list = append(list, canon)
		}
	}
	c.mu.Lock()
	c.list = list
	c.mu.Unlock()
}

func (c *clientRoots) markReady() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// changed is roots/list_changed: the new list is asked for at once; calls
// use it as soon as it is in.
func (c *clientRoots) changed(_ context.Context, req *mcp.RootsListChangedRequest) {
	if offersRoots(req.Session) {
		c.mu.Lock()
		c.started = true
		c.mu.Unlock()
		go c.refresh(req.Session)
	}
}
