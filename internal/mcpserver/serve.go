package mcpserver

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/escalation"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// Host is what the server takes from the process that runs it.
type Host struct {
	// Stdin and Stdout carry JSON-RPC; Stderr what the server says of
	// itself.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// LookupEnv reads the environment (a dsh-fs exec session's channel,
	// XDG_RUNTIME_DIR for the escalator's record).
	LookupEnv func(string) (string, bool)
}

// Serve is dsh-fs mcp's server: it serves the tools over h's standard
// input and output until the client closes them or a signal ends it,
// under the settings s that dsh-fs mcp loaded from the trusted sources
// and its own command line; dirs are the allowed folders as given. Once
// it has started, its standard output carries JSON-RPC only: the caller
// says a failure it returns on standard error.
func Serve(h Host, s *config.Settings, dirs []string) error {
	// A server's heap is small and lives long; collecting it at every
	// doubling cost a warm small call about a seventh of its time.
	debug.SetGCPercent(400)
	srv, m := newServer(s, dirs)
	if h.Stderr != nil {
		m.roots.log = h.Stderr
	}
	if s.Policy.Mode != policy.ReadOnly {
		// At the first mutating call, before its write restricts this
		// process for good (beginMutation): a server that only reads
		// never starts one, and the first answer never waits for it.
		var mu sync.Mutex
		started := false
		m.startRunner = func() {
			mu.Lock()
			defer mu.Unlock()
			if !started {
				started = true
				var why string
				m.runner, why = escalation.Start(h.LookupEnv, s, m.clientApproved)
				m.grantRefusal = grantRefusalFor(s.Policy.Approval, why)
			}
		}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if m.runner != nil {
				m.runner.Stop()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := &lockedWriter{w: h.Stdout}
	in := newLineFilter(h.Stdin, out, h.Stderr, func() bool { return batchesAllowed(srv) })
	// The filter bounds a message (maxMessageBytes); the SDK's own cap
	// would end the session instead.
	// drainTransport answers every request read before the end of input
	// ends the session.
	t := drainTransport{&mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1}}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fserr.Wrap(fserr.IO, "mcp: "+err.Error(), err)
	}
	return nil
}

// batchesAllowed reports whether the session of srv is on a protocol that
// has JSON-RPC batches (before 2025-06-18), or not initialized yet, as the
// SDK decides.
func batchesAllowed(srv *mcp.Server) bool {
	for ss := range srv.Sessions() {
		if ip := ss.InitializeParams(); ip != nil {
			return ip.ProtocolVersion == "2024-11-05" || ip.ProtocolVersion == "2025-03-26"
		}
	}
	return true
}
