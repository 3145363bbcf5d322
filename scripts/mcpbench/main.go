//go:build unix

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

// measured are one server's figures.
type measured struct {
	label      string
	argv       []string
	colds      []time.Duration
	warm       map[string]time.Duration
	edit, rss  string
	editMedian time.Duration
}

func main() {
	label := flag.String("label", "", "the server's name in the table")
	dir := flag.String("dir", "", "the allowed folder, holding big.txt (50 MiB, one BENCH_MARK_LINE_OLD=1 line)")
	cold := flag.Int("cold", 21, "cold starts")
	warm := flag.Int("warm", 1001, "warm calls of each small tool")
	edits := flag.Int("edits", 5, "edits of the big file, each in a fresh server (0: none, a floor's row)")
	coldWith := flag.String("cold-with", "", "LABEL=SERVER ARGS (split at spaces): another server whose cold starts alternate with these, printed as a row of its own")
	against := flag.String("against", "", "LABEL=SERVER ARGS (split at spaces): another server measured in the same run, every measurement alternating with this one's, printed as a row of its own and a row of ratios")
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
	servers := []*measured{{label: *label, argv: argv}}
	if *against != "" {
		l, args, _ := strings.Cut(*against, "=")
		servers = append(servers, &measured{label: l, argv: strings.Fields(args)})
	}
	var other *measured
	if *coldWith != "" {
		l, args, _ := strings.Cut(*coldWith, "=")
		other = &measured{label: l, argv: strings.Fields(args)}
	}
	measureCold(servers, other, *cold, small)
	measureWarm(servers, *warm, *dir, small, kib)
	measureEdits(servers, *edits, filepath.Join(*dir, "big.txt"), argv)
	printRows(servers, other)
}

// coldStart is one cold start of the server argv: spawn, initialize, one
// get_file_info of small answered.
func coldStart(argv []string, small string) time.Duration {
	t0 := time.Now()
	s, err := start(argv)
	if err != nil {
		fatal(err)
	}
	if err := s.initialize(); err != nil {
		fatal(err)
	}
	if err := s.tool("get_file_info", map[string]any{"path": small}); err != nil {
		fatal(err)
	}
	d := time.Since(t0)
	s.stop()
	return d
}

// measureCold makes n cold starts of each server. The servers' cold
// starts alternate (with other's, -cold-with's, when there is one), so
// that all meet the same load.
func measureCold(servers []*measured, other *measured, n int, small string) {
	for i := 0; i < n; i++ {
		for _, m := range servers {
			m.colds = append(m.colds, coldStart(m.argv, small))
		}
		if other != nil {
			other.colds = append(other.colds, coldStart(other.argv, small))
		}
	}
}

// measureWarm starts one server each, warms it up, then makes each small
// call n times, the servers' calls alternating one by one.
func measureWarm(servers []*measured, n int, dir, small, kib string) {
	var live []*server
	for _, m := range servers {
		s, err := start(m.argv)
		if err != nil {
			fatal(err)
		}
		if err := s.initialize(); err != nil {
			fatal(err)
		}
		live = append(live, s)
		m.warm = map[string]time.Duration{}
	}
	warmCalls := []struct {
		name string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": small}},
		{"write_file", map[string]any{"path": filepath.Join(dir, "kib-w.txt"), "content": kib}},
		{"get_file_info", map[string]any{"path": small}},
	}
	for _, c := range warmCalls {
		for _, s := range live {
			for i := 0; i < 20; i++ {
				if err := s.tool(c.name, c.args); err != nil {
					fatal(err)
				}
			}
		}
		ds := make([][]time.Duration, len(live))
		for i := 0; i < n; i++ {
			for k, s := range live {
				t0 := time.Now()
				if err := s.tool(c.name, c.args); err != nil {
					fatal(err)
				}
				ds[k] = append(ds[k], time.Since(t0))
			}
		}
		for k, m := range servers {
			m.warm[c.name] = median(ds[k])
		}
	}
	for _, s := range live {
		s.stop()
	}
}

// measureEdits makes n big edits of big by each server: a fresh server
// each time (its peak RSS is then the edit's), the marker line flipped
// back and forth, the servers taking turns. A marker left flipped is put
// back by the server argv.
func measureEdits(servers []*measured, n int, big string, argv []string) {
	marks := [2]string{"BENCH_MARK_LINE_OLD=1", "BENCH_MARK_LINE_NEW=2"}
	flips := 0
	eds := make([][]time.Duration, len(servers))
	peaks := make([]int64, len(servers))
	for i := 0; i < n; i++ {
		for k, m := range servers {
			s, err := start(m.argv)
			if err != nil {
				fatal(err)
			}
			if err := s.initialize(); err != nil {
				fatal(err)
			}
			from, to := marks[flips%2], marks[(flips+1)%2]
			t0 := time.Now()
			if err := s.tool("edit_file", map[string]any{"path": big, "edits": []map[string]string{{"oldText": from, "newText": to}}}); err != nil {
				fatal(err)
			}
			eds[k] = append(eds[k], time.Since(t0))
			flips++
			peaks[k] = max(peaks[k], s.stop())
		}
	}
	if flips%2 == 1 { // put the marker back
		s, err := start(argv)
		if err == nil && s.initialize() == nil {
			s.tool("edit_file", map[string]any{"path": big, "edits": []map[string]string{{"oldText": marks[1], "newText": marks[0]}}})
			s.stop()
		}
	}
	for k, m := range servers {
		m.edit, m.rss = "—", "—"
		if len(eds[k]) > 0 {
			m.editMedian = median(eds[k])
			m.edit, m.rss = ms(m.editMedian), fmt.Sprintf("%.0f MiB", float64(peaks[k])/(1<<20))
		}
	}
}

// printRows prints a table row for each server, one for other's cold
// starts when there is one, and a row of ratios when two servers were
// measured side by side.
func printRows(servers []*measured, other *measured) {
	for _, m := range servers {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", m.label, ms(median(m.colds)),
			ms(m.warm["read_text_file"]), ms(m.warm["write_file"]), ms(m.warm["get_file_info"]), m.edit, m.rss)
	}
	if other != nil {
		fmt.Printf("| %s | %s | — | — | — | — | — |\n", other.label, ms(median(other.colds)))
	}
	if len(servers) == 2 {
		a, b := servers[0], servers[1]
		ratio := func(x, y time.Duration) string {
			if y == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f", float64(x)/float64(y))
		}
		fmt.Printf("| ratio %s / %s (below 1: %s is faster) | %s | %s | %s | %s | %s | — |\n", a.label, b.label, a.label,
			ratio(median(a.colds), median(b.colds)), ratio(a.warm["read_text_file"], b.warm["read_text_file"]),
			ratio(a.warm["write_file"], b.warm["write_file"]), ratio(a.warm["get_file_info"], b.warm["get_file_info"]),
			ratio(a.editMedian, b.editMedian))
	}
}
