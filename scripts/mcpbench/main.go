// Command mcpbench measures an MCP filesystem server over stdio with raw
// JSON-RPC lines (no client library in the timed path): cold start to the
// first tool answer, warm per-call latency of small calls, and a one-line
// edit_file in a large file with the server's peak RSS. It prints one
// Markdown table row per measurement for scripts/bench.sh.
//
//	mcpbench -label dsh-fs -dir WS -- dsh-fs mcp WS
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

type server struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out *bufio.Reader
	id  int
}

func start(argv []string) (*server, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Stderr = nil
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &server{cmd: c, in: bufio.NewWriter(stdin), out: bufio.NewReaderSize(stdout, 1<<20)}, nil
}

// call sends one request and reads lines until its answer.
func (s *server) call(method string, params any) (json.RawMessage, error) {
	s.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	s.in.Write(append(req, '\n'))
	if err := s.in.Flush(); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != s.id {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, msg.Error)
		}
		if strings.Contains(string(msg.Result), `"isError":true`) {
			return nil, fmt.Errorf("%s: tool error: %.300s", method, msg.Result)
		}
		return msg.Result, nil
	}
}

func (s *server) notify(method string) error {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	s.in.Write(append(req, '\n'))
	return s.in.Flush()
}

func (s *server) initialize() error {
	_, err := s.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcpbench", "version": "0"}})
	if err != nil {
		return err
	}
	return s.notify("notifications/initialized")
}

func (s *server) tool(name string, args map[string]any) error {
	_, err := s.call("tools/call", map[string]any{"name": name, "arguments": args})
	return err
}

// stop closes stdin and waits; it returns the server's peak RSS in bytes.
func (s *server) stop() int64 {
	s.in.Flush()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mcpbench:", err)
	os.Exit(1)
}

func main() {
	label := flag.String("label", "", "the server's name in the table")
	dir := flag.String("dir", "", "the allowed folder, holding big.txt (50 MiB, one BENCH_MARK_LINE_OLD=1 line)")
	cold := flag.Int("cold", 21, "cold starts")
	warm := flag.Int("warm", 1001, "warm calls of each small tool")
	edits := flag.Int("edits", 5, "edits of the big file, each in a fresh server (0: none, a floor's row)")
	coldWith := flag.String("cold-with", "", "LABEL=SERVER ARGS (split at spaces): another server whose cold starts alternate with these, printed as a row of its own")
	flag.Parse()
	argv := flag.Args()
	if *label == "" || *dir == "" || len(argv) == 0 {
		fatal(fmt.Errorf("usage: mcpbench -label L -dir WS -- SERVER ARGS"))
	}
	kib := strings.Repeat("0123456789abcde\n", 64)
	small := filepath.Join(*dir, "kib.txt")
	if err := os.WriteFile(small, []byte(kib), 0o644); err != nil {
		fatal(err)
	}
	info := map[string]any{"path": small}

	// Cold: spawn, initialize, one get_file_info answered. With
	// -cold-with, the other server's cold starts alternate with these, so
	// that both meet the same load.
	coldStart := func(argv []string) time.Duration {
		t0 := time.Now()
		s, err := start(argv)
		if err != nil {
			fatal(err)
		}
		if err := s.initialize(); err != nil {
			fatal(err)
		}
		if err := s.tool("get_file_info", info); err != nil {
			fatal(err)
		}
		d := time.Since(t0)
		s.stop()
		return d
	}
	otherLabel, otherArgs, _ := strings.Cut(*coldWith, "=")
	var colds, otherColds []time.Duration
	for i := 0; i < *cold; i++ {
		colds = append(colds, coldStart(argv))
		if *coldWith != "" {
			otherColds = append(otherColds, coldStart(strings.Fields(otherArgs)))
		}
	}

	// Warm: one server, a warm-up, then each small call many times.
	s, err := start(argv)
	if err != nil {
		fatal(err)
	}
	if err := s.initialize(); err != nil {
		fatal(err)
	}
	warmCalls := []struct {
		name string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": small}},
		{"write_file", map[string]any{"path": filepath.Join(*dir, "kib-w.txt"), "content": kib}},
		{"get_file_info", info},
	}
	warmMed := map[string]time.Duration{}
	for _, c := range warmCalls {
		for i := 0; i < 20; i++ {
			if err := s.tool(c.name, c.args); err != nil {
				fatal(err)
			}
		}
		var ds []time.Duration
		for i := 0; i < *warm; i++ {
			t0 := time.Now()
			if err := s.tool(c.name, c.args); err != nil {
				fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		warmMed[c.name] = median(ds)
	}
	s.stop()

	// The big edit: a fresh server each time (its peak RSS is then the
	// edit's), the marker line flipped back and forth.
	big := filepath.Join(*dir, "big.txt")
	var eds []time.Duration
	var peak int64
	marks := [2]string{"BENCH_MARK_LINE_OLD=1", "BENCH_MARK_LINE_NEW=2"}
	for i := 0; i < *edits; i++ {
		s, err := start(argv)
		if err != nil {
			fatal(err)
		}
		if err := s.initialize(); err != nil {
			fatal(err)
		}
		from, to := marks[i%2], marks[(i+1)%2]
		t0 := time.Now()
		if err := s.tool("edit_file", map[string]any{"path": big, "edits": []map[string]string{{"oldText": from, "newText": to}}}); err != nil {
			fatal(err)
		}
		eds = append(eds, time.Since(t0))
		peak = max(peak, s.stop())
	}
	if *edits%2 == 1 { // put the marker back
		s, err := start(argv)
		if err == nil && s.initialize() == nil {
			s.tool("edit_file", map[string]any{"path": big, "edits": []map[string]string{{"oldText": marks[1], "newText": marks[0]}}})
			s.stop()
		}
	}
	edit, rss := "—", "—"
	if len(eds) > 0 {
		edit, rss = ms(median(eds)), fmt.Sprintf("%.0f MiB", float64(peak)/(1<<20))
	}
	fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", *label, ms(median(colds)),
		ms(warmMed["read_text_file"]), ms(warmMed["write_file"]), ms(warmMed["get_file_info"]), edit, rss)
	if *coldWith != "" {
		fmt.Printf("| %s | %s | — | — | — | — | — |\n", otherLabel, ms(median(otherColds)))
	}
}
