//go:build unix

package race

// The read side of the symlink-swap race, against dsh-fs mcp: the
// attacker process of TestSymlinkSwapRace swaps links and exchanges a
// real folder and a real file with links to a secret folder beside the
// workspace, as fast as it can, while one long-lived server reads, stats,
// lists, walks and searches paths through those names. The server's only
// defence is its read confinement to its allowed folders (no deny_read:
// the trusted system folder is empty), decided by name and again on what
// was opened. Not one byte of a secret's content, not one of its names
// and not its size may reach a result.
//
// A leak-free run proves something only if the race could be lost, so the
// same attacker races a deliberately naive reader in this process (check
// the canonical path, then read the path as given) which must leak.
//
// The run is bounded by calls, not by time. DSHFS_MCP_READRACE_CALLS
// changes that number, for a soak or a quick look:
//
//	DSHFS_MCP_READRACE_CALLS=5000 go test -run TestMcpReadSwapRace -v .

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const envMcpReadRaceCalls = "DSHFS_MCP_READRACE_CALLS" // calls in all

// mcpReadRaceCalls is how many tool calls a run makes: some 700 a second
// on a 2-core machine beside the attacker, 2 s. A server built with -race
// answers some 300 a second, so under -race a run makes
// mcpReadRaceCallsRace, 2 to 3 s. Each tool then has 100 calls at least:
// at the rate the rarer state comes (one call in seven, at worst, under
// -race), all of them in one state would happen by chance about once in
// three million runs.
const (
	mcpReadRaceCalls     = 1400
	mcpReadRaceCallsRace = 700
)

// The naive control's bounds: it stops at the first few leaks, and gives
// up after so many attempts or so long.
const (
	naiveReadLeaksEnough = 5
	naiveReadAttempts    = 20000
	naiveReadTime        = 5 * time.Second
)

// mcpReadRaceFiles and mcpReadRaceDirs go through the names the attacker
// swaps: file.txt (exchanged with a link to outside/target.txt), d
// (exchanged with a link to outside/dir), ln and d2 (retargeted between
// d and outside/dir) and lnf (retargeted between inside.txt and
// outside/target.txt).
var (
	mcpReadRaceFiles = []string{"file.txt", "lnf", "d/f.txt", "ln/f.txt", "d2/f.txt"}
	mcpReadRaceDirs  = []string{"d", "ln", "d2"}
)

// mcpReadRaceCall is one tool call of the schedule.
type mcpReadRaceCall struct {
	tool string
	args map[string]any
}

// mcpReadRaceSchedule is n calls, cycling through the read tools, each
// tool through its own paths.
func mcpReadRaceSchedule(n int) []mcpReadRaceCall {
	file := func(i int) string { return mcpReadRaceFiles[i%len(mcpReadRaceFiles)] }
	dir := func(i int) string { return mcpReadRaceDirs[i%len(mcpReadRaceDirs)] }
	kinds := []func(i int) mcpReadRaceCall{
		func(i int) mcpReadRaceCall { return mcpReadRaceCall{"read_text_file", map[string]any{"path": file(i)}} },
		func(i int) mcpReadRaceCall { return mcpReadRaceCall{"get_file_info", map[string]any{"path": file(i)}} },
		func(i int) mcpReadRaceCall { return mcpReadRaceCall{"list_directory", map[string]any{"path": dir(i)}} },
		func(i int) mcpReadRaceCall {
			return mcpReadRaceCall{"list_directory_with_sizes", map[string]any{"path": dir(i)}}
		},
		func(i int) mcpReadRaceCall { return mcpReadRaceCall{"directory_tree", map[string]any{"path": dir(i)}} },
		func(i int) mcpReadRaceCall {
			return mcpReadRaceCall{"search_files", map[string]any{"path": dir(i), "pattern": "**/*"}}
		},
		func(i int) mcpReadRaceCall {
			return mcpReadRaceCall{"read_multiple_files", map[string]any{"paths": []string{file(i), file(i + 1), file(i + 2)}}}
		},
	}
	calls := make([]mcpReadRaceCall, n)
	for i := range calls {
		calls[i] = kinds[i%len(kinds)](i / len(kinds))
	}
	return calls
}

// TestMcpReadSwapRace races the read tools of one dsh-fs mcp against the
// swapping attacker and counts the leaks: a result showing the secret's
// content, names or size. Each tool must have met both states of the
// attacker's names (answered some calls, refused some as outside), and
// the naive reader must have leaked under the same attacker.
func TestMcpReadSwapRace(t *testing.T) {
	if testing.Short() {
		t.Skip("a race of some hundreds of calls")
	}
	n := raceCallCount(t, envMcpReadRaceCalls, mcpReadRaceCalls, mcpReadRaceCallsRace)
	// The secrets are outside/ of the read race; its deny_read system file
	// is left out: the confinement alone must hold.
	l := newReadRaceLayout(t).raceLayout
	var env []string
	for _, kv := range raceEnv(l, "auto", nil) {
		if !strings.HasPrefix(kv, "DSH_FS_CWD=") {
			env = append(env, kv)
		}
	}
	env = append(env, "DSH_FS_TEST_SYSTEM_DIR="+t.TempDir(), "DSH_FS_TEST_HOME="+l.home)

	attacker := startRaceAttacker(t, l, 60*time.Second)
	c := exec.Command(harness.Bin(t), "mcp", "--tmp=false", l.ws)
	c.Env, c.Dir, c.Stderr = env, l.ws, os.Stderr
	s := harness.MCPConnect(t, c, nil)

	start := time.Now()
	stats := map[string]*readRaceStats{}
	var tools []string
	for _, call := range mcpReadRaceSchedule(n) {
		st := stats[call.tool]
		if st == nil {
			st = &readRaceStats{classes: map[string]int{}}
			stats[call.tool] = st
			tools = append(tools, call.tool)
		}
		res := harness.MCPCall(t, s, call.tool, call.args)
		class, leak := mcpReadRaceClassify(call, res)
		st.calls++
		st.classes[class]++
		if leak != "" {
			st.leaks++
			if len(st.examples) < 3 {
				st.examples = append(st.examples, leak)
			}
		}
	}
	elapsed := time.Since(start)
	s.Close()

	naiveLeaks, naiveAttempts, naiveElapsed, naiveExample := naiveReadRace(l)
	t.Logf("%d calls in %v; naive reader: %d leaks in %d attempts (%v); %s", n, elapsed.Round(time.Millisecond),
		naiveLeaks, naiveAttempts, naiveElapsed.Round(time.Millisecond), attacker.stop(t))
	if naiveExample != "" {
		t.Logf("  naive leak: %s", naiveExample)
	}

	leaks, ok, outside := 0, 0, 0
	for _, tool := range tools {
		st := stats[tool]
		t.Logf("  %-26s %4d calls: %4d leaked  %s", tool, st.calls, st.leaks, st.histogram())
		for _, e := range st.examples {
			t.Logf("      leak: %s", e)
		}
		leaks += st.leaks
		// A tool that met only one state of the names proves nothing: a
		// server that refuses every call leaks nothing either.
		toolOK := st.classes["ok"] + st.classes["ok, some outside"]
		toolOutside := st.classes["outside"] + st.classes["ok, some outside"]
		ok += toolOK
		outside += toolOutside
		if toolOK == 0 || toolOutside == 0 {
			t.Errorf("%s: %d calls answered and %d refused as outside: the race was not exercised", tool, toolOK, toolOutside)
		}
	}
	if ok == 0 || outside == 0 {
		t.Errorf("%d calls answered and %d refused as outside: the race was not exercised", ok, outside)
	}
	if leaks > 0 {
		t.Errorf("LEAK: %d of %d calls showed the secret's content, names or size", leaks, n)
	}
	if naiveLeaks == 0 {
		t.Errorf("the attacker never beat a check-then-read in %d attempts: this race proves nothing", naiveAttempts)
	}
}

// mcpReadRaceClassify returns a call's class, "ok", "outside", "ok, some
// outside" (read_multiple_files answers with an error per file) or the
// first line of another error, and, when the call leaked, what it showed.
// The whole result is searched, structured content included.
func mcpReadRaceClassify(call mcpReadRaceCall, res *mcp.CallToolResult) (class, leak string) {
	text := harness.MCPText(res)
	const outsideReason = "outside the allowed folders"
	const marker = "[sandbox: file access denied under workspace-write mode]"
	switch {
	case !res.IsError && strings.Contains(text, outsideReason):
		class = "ok, some outside"
	case !res.IsError:
		class = "ok"
	case strings.Contains(text, outsideReason) && strings.Contains(text, marker):
		class = "outside"
	default:
		first, _, _ := strings.Cut(text, "\n")
		class = "error: " + first
	}
	shown := text
	if b, err := json.Marshal(res); err == nil {
		shown += "\n" + string(b)
	}
	size := strconv.Itoa(readRaceSecretSize)
	switch {
	case strings.Contains(shown, readRaceSecretWord):
		leak = fmt.Sprintf("%s %v: the secret's content: %.200q", call.tool, call.args, text)
	case strings.Contains(shown, readRaceSecretName):
		leak = fmt.Sprintf("%s %v: a secret's name: %.300q", call.tool, call.args, text)
	case strings.Contains(shown, "size: "+size), strings.Contains(shown, `"size":`+size),
		strings.Contains(shown, formatSecretSize()):
		leak = fmt.Sprintf("%s %v: the secret's size: %.300q", call.tool, call.args, text)
	}
	return class, leak
}

// formatSecretSize is the secret's size as list_directory_with_sizes says
// it, the official server's way: 7777 bytes are "7.60 KB".
func formatSecretSize() string {
	return fmt.Sprintf("%.2f KB", float64(readRaceSecretSize)/1024)
}

// naiveReadRace is the control: a reader that checks the canonical path
// and then reads the path as given, following whatever link is there by
// then. It returns how often it read the secret, in how many attempts,
// and one example.
func naiveReadRace(l raceLayout) (leaks, attempts int, elapsed time.Duration, example string) {
	start := time.Now()
	for ; attempts < naiveReadAttempts && leaks < naiveReadLeaksEnough && time.Since(start) < naiveReadTime; attempts++ {
		p := filepath.Join(l.ws, mcpReadRaceFiles[attempts%len(mcpReadRaceFiles)])
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !strings.HasPrefix(real, l.ws+"/") {
			continue
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(readRaceSecretWord)) {
			leaks++
			if example == "" {
				first, _, _ := strings.Cut(string(b), "\n")
				example = fmt.Sprintf("%s checked as %s, read %q", p, real, first)
			}
		}
	}
	return leaks, attempts, time.Since(start), example
}
