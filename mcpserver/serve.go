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

	"github.com/dshfs/dsh-fs/cmd"
	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// Serve is dsh-fs mcp's server (a cmd.MCPServer): it serves the tools over
// a's standard input and output until the client closes them or a signal
// ends it, under the settings s that dsh-fs mcp loaded from the trusted
// sources and its own command line.
func Serve(a *cmd.App, s *config.Settings, dirs []string) error {
	// A server's heap is small and lives long; collecting it at every
	// doubling cost a warm small call about a seventh of its time.
	debug.SetGCPercent(400)
	srv, m := newServer(s, dirs)
	if s.Policy.Mode != sandbox.ReadOnly {
		// At the first mutating call, before its write restricts this
		// process for good (beginMutation): a server that only reads
		// never starts one, and the first answer never waits for it.
		var mu sync.Mutex
		started := false
		m.startElsewhere = func() {
			mu.Lock()
			defer mu.Unlock()
			if !started {
				started = true
				var why string
				m.elsewhere, why = cmd.StartElsewhere(a, s, m.clientApproved)
				m.noGrant = noGrantReason(s.Policy.Approval, why)
			}
		}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if m.elsewhere != nil {
				m.elsewhere.Stop()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &mcp.IOTransport{Reader: io.NopCloser(a.Stdin), Writer: nopWriteCloser{a.Stdout}}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fserr.Wrap(fserr.IO, "mcp: "+err.Error(), err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
