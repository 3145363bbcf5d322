package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// MCP client roots (docs/design.md §5). A client that offers roots may
// narrow the allowed folders to the parts inside them, never widen them:
// they become the fence's Within. The official server replaces its
// folders with the client's roots; a client could then hand it "/". A
// client that lists no root (none at all, or none a file: URI), or
// cannot list them, leaves the folders as they are, as the official
// server keeps its command-line folders: the MCP Inspector offers roots
// and lists none by default.
//
// Roots are a server-to-client request, which the SDK refuses on protocol
// 2026-07-28 outside a multi-round-trip request (the feature is
// deprecated there): clients on the protocols before it are asked, which
// includes one that proposed 2026-07-28 in initialize (settleProtocol).

// rootsWait bounds how long a tool call waits for the client's first
// list of roots.
const rootsWait = 10 * time.Second

// clientRoots is the latest list of roots the client gave.
type clientRoots struct {
	// home is the user database's home, for a root "~" or "~/x"; log
	// is standard error, where a root skipped is said.
	home string
	log  io.Writer

	mu      sync.Mutex
	started bool
	ready   chan struct{} // closed once the first list is in, or failed
	list    []string      // canonical; nil until one was listed
}

func newClientRoots(home string) *clientRoots {
	return &clientRoots{home: home, log: io.Discard, ready: make(chan struct{})}
}

// offersRoots reports whether the client of ss offers roots on a protocol
// where the server may ask for them.
func offersRoots(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.RootsV2 != nil && ip.ProtocolVersion < protocolWithoutInitialize
}

// settleProtocol is a receiving middleware: an initialize request that
// proposes a protocol the SDK answers with an older one (2026-07-28 and
// later, which have no initialize, or one it does not know) is recorded
// with the protocol the session settles on, so that what the session can
// do (roots, list-changed notifications) follows the protocol it is on.
// The answer is the same: the SDK negotiates the proposal to that one.
func settleProtocol(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ir, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams]); ok && ir.Params != nil {
			ir.Params.ProtocolVersion = settledProtocol(ir.Params.ProtocolVersion)
		}
		return next(ctx, method, req)
	}
}

// settledProtocol is the protocol an initialize proposing v settles on,
// as the SDK negotiates it: v when it knows it and it has initialize,
// otherwise the newest it knows that has.
func settledProtocol(v string) string {
	supported := mcp.SupportedProtocolVersions()
	if slices.Contains(supported, v) && v < protocolWithoutInitialize {
		return v
	}
	for _, s := range supported {
		if s < protocolWithoutInitialize {
			return s
		}
	}
	return v
}

// protocolWithoutInitialize is the first protocol without initialize,
// and without server-to-client requests outside a round trip.
const protocolWithoutInitialize = "2026-07-28"

// within returns the Within of a call from the client of ss: nil (the
// allowed folders whole) when the client offers no roots, or lists none,
// or cannot list them; otherwise its roots, waiting for the first list.
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
	if len(c.list) == 0 {
		return nil
	}
	return c.list
}

// refresh asks the client for its roots and keeps the folders among
// them; a failure keeps the previous list (none at first), and so does a
// list with no folder in it (none, or only roots skipped), as the
// official server keeps its folders then.
func (c *clientRoots) refresh(ss *mcp.ServerSession) {
	defer c.markReady()
	ctx, cancel := context.WithTimeout(context.Background(), rootsWait)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		fmt.Fprintf(c.log, "dsh-fs mcp: cannot list the client's roots: %v\n", err)
		return
	}
	list := []string{}
	for _, r := range res.Roots {
		dir, why := c.folder(r.URI)
		if why != "" {
			fmt.Fprintf(c.log, "dsh-fs mcp: skipping the client's root %s: %s\n", r.URI, why)
			continue
		}
		list = append(list, dir)
	}
	if len(list) == 0 {
		if len(res.Roots) > 0 {
			fmt.Fprintf(c.log, "dsh-fs mcp: no folder among the client's roots; the allowed folders stay as they were\n")
		}
		return
	}
	c.mu.Lock()
	c.list = list
	c.mu.Unlock()
}

// folder is the canonical folder a root names, or why it names none. A
// root is a file: URI or, as the official server takes one, a path: "~"
// and "~/x" are in the user database's home, a relative path is taken
// from this process's folder. A root that is missing, or not a folder,
// names none: the official server skips it.
func (c *clientRoots) folder(uri string) (string, string) {
	p := uri
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" {
		if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			return "", "not a file: URI or a path"
		}
		p = u.Path
	} else if c.home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = c.home + p[1:]
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err.Error()
	}
	canon, err := sandbox.Canonical("/", abs)
	if err != nil {
		return "", err.Error()
	}
	return canon, notFolder(canon)
}

// notFolder says why path is no folder to serve, or "" when it is one.
func notFolder(path string) string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such folder"
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return "not a folder"
	}
	return ""
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
