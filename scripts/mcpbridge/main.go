// Command mcpbridge serves a stdio MCP server over the streamable HTTP
// transport, on a loopback address only, so that clients that speak only
// HTTP (the official conformance suite) can drive it. Each session's
// initialize starts a fresh child; every POSTed message becomes one line
// on the child's stdin, and every line the child writes goes back
// unchanged: its answer (as JSON when that is all, else as SSE) on the
// POST of its request, its own requests and notifications as SSE on a
// POST in flight or on the session's GET stream. Nothing is added,
// rewritten or dropped, so what a client sees is the server's own
// behaviour; what the bridge refuses it refuses with an HTTP status and a
// text body, never a JSON-RPC message of its own.
//
//	mcpbridge -listen 127.0.0.1:0 -url-file URL -- dsh-fs mcp DIR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback `address` to listen on (port 0: any free port)")
	urlFile := flag.String("url-file", "", "write the endpoint's URL to this `file` once listening")
	flag.Parse()
	argv := flag.Args()
	logger := log.New(os.Stderr, "mcpbridge: ", 0)
	if len(argv) == 0 {
		logger.Fatal("usage: mcpbridge [-listen 127.0.0.1:PORT] [-url-file F] -- SERVER ARGS")
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		logger.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		logger.Fatalf("%s: not a loopback IP address: the bridge serves this machine only", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Fatal(err)
	}
	endpoint := fmt.Sprintf("http://%s/mcp", ln.Addr())
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(endpoint+"\n"), 0o644); err != nil {
			logger.Fatal(err)
		}
	}
	logger.Printf("serving %v on %s", argv, endpoint)

	b := newBridge(argv, logger)
	srv := &http.Server{Handler: b}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		b.endAll()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Fatal(err)
	}
	b.endAll()
}
