//go:build unix

package race

// The read side of the symlink-swap race (issue 12, "Check what you
// opened"): the attacker process of TestSymlinkSwapRace swaps links and
// exchanges a real folder and a real file with links to a deny_read
// folder, as fast as it can, while two goroutines exec the real dsh-fs
// over and over to read, stream, copy (write --from), stat and list paths
// inside the workspace. Not one byte of a secret's content, not one of its
// names and not its size may reach a result.
//
// The run is bounded by calls, not by time: readRaceCalls of each kind.
// DSHFS_READRACE_CALLS changes that number, for a soak or a quick look:
//
//	DSHFS_READRACE_CALLS=1000 go test -run TestReadSwapRace -v .

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
)

const envReadRaceCalls = "DSHFS_READRACE_CALLS" // calls of each kind

// readRaceCalls is how many calls of each kind a run makes: six kinds, at
// about 80 calls a second on a 2-core machine beside the attacker, some
// 15 s. A race-instrumented dsh-fs makes 15 to 20 a second, so under
// -race a run makes readRaceCallsRace of each kind, 20 to 25 s.
const (
	readRaceCalls     = 200
	readRaceCallsRace = 60
)

// The secret's markers: its content, its names and its size. Nothing in
// the workspace holds either word, and the secret files are exactly
// readRaceSecretSize bytes, a size no workspace file has.
const (
	readRaceSecretWord = "SECRETCONTENT"
	readRaceSecretName = "secretname"
	readRaceSecretSize = 7777
)

// readRaceKinds are the kinds of call, each with the calls it cycles
// through. Every path goes through a name the attacker swaps: file.txt
// (exchanged with a link to outside/target.txt), d (exchanged with a link
// to outside/dir), ln and d2 (retargeted between d and outside/dir) and
// lnf (retargeted between inside.txt and outside/target.txt). "OUT" is
// the worker's own write target.
var readRaceKinds = []struct {
	kind  string
	calls [][]string
}{
	{"read", [][]string{{"read", "file.txt"}, {"read", "lnf"}, {"read", "d/f.txt"}, {"read", "ln/f.txt"}, {"read", "d2/f.txt"}}},
	{"read --raw", [][]string{{"read", "--raw", "file.txt"}, {"read", "--raw", "lnf"}, {"read", "--raw", "d/f.txt"}, {"read", "--raw", "ln/f.txt"}}},
	{"write --from", [][]string{{"write", "OUT", "--from", "file.txt"}, {"write", "OUT", "--from", "lnf"}, {"write", "OUT", "--from", "d/f.txt"}, {"write", "OUT", "--from", "ln/f.txt"}}},
	{"stat", [][]string{{"stat", "d/f.txt"}, {"stat", "ln/f.txt"}, {"stat", "d2/f.txt"}}},
	{"ls", [][]string{{"ls", "d"}, {"ls", "ln"}, {"ls", "d2"}}},
	{"ls --recursive", [][]string{{"ls", "--recursive"}, {"ls", "--recursive", "d"}, {"ls", "--recursive", "ln"}}},
}

// TestReadSwapRace races reads, raw reads, write --from copies, stats and
// listings against the swapping attacker, with the attacker's outside
// folder under an anchored deny_read glob, and counts the leaks: a result
// or a copied file holding the secret's content, names or size.
func TestReadSwapRace(t *testing.T) {
	if testing.Short() {
		t.Skip("a race of some hundreds of processes")
	}
	perKind := raceCallCount(t, envReadRaceCalls, readRaceCalls, readRaceCallsRace)
	bin := harness.Bin(t)
	l := newReadRaceLayout(t)
	// deny_read is the deployment's: in the trusted system file, found
	// through the test binary's hook, as the write race sets enforce.
	env := append(raceEnv(l.raceLayout, "auto", nil), "DSH_FS_TEST_SYSTEM_DIR="+l.system, "DSH_FS_TEST_HOME="+l.home)

	// The schedule: perKind calls of each kind, shuffled, so that every
	// kind meets the attacker in every phase of the run.
	type job struct {
		kind string
		args []string
	}
	var jobs []job
	for _, k := range readRaceKinds {
		for i := range perKind {
			jobs = append(jobs, job{k.kind, k.calls[i%len(k.calls)]})
		}
	}
	rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	attacker := startRaceAttacker(t, l.raceLayout, 60*time.Second)
	start := time.Now()
	stats := map[string]*readRaceStats{}
	for _, k := range readRaceKinds {
		stats[k.kind] = &readRaceStats{classes: map[string]int{}}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	const workers = 2
	for w := range workers {
		wg.Go(func() {
			out := fmt.Sprintf("out-w%d.txt", w)
			for i := w; i < len(jobs); i += workers {
				j := jobs[i]
				args := make([]string, len(j.args))
				for k, a := range j.args {
					args[k] = strings.ReplaceAll(a, "OUT", out)
				}
				// Each copy creates its target afresh: a leak's diff shows
				// only what this call read, never an earlier call's leak.
				os.Remove(filepath.Join(l.ws, out))
				class, leak := runReadRaceCall(bin, env, l.ws, args, filepath.Join(l.ws, out))
				mu.Lock()
				s := stats[j.kind]
				s.calls++
				s.classes[class]++
				if leak != "" {
					s.leaks++
					if len(s.examples) < 3 {
						s.examples = append(s.examples, leak)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d calls in %v; %s", len(jobs), elapsed.Round(time.Millisecond), attacker.stop(t))

	leaks := 0
	for _, k := range readRaceKinds {
		s := stats[k.kind]
		t.Logf("  %-15s %4d calls: %4d leaked  %s", k.kind, s.calls, s.leaks, s.histogram())
		for _, e := range s.examples {
			t.Logf("      leak: %s", e)
		}
		leaks += s.leaks
		// Each kind must have met both states of the attacker's names:
		// some calls read the workspace, some were denied by deny_read
		// (or, for a recursive listing, hid an entry). A kind with only
		// one of them proves nothing: a policy that refuses every call
		// leaks nothing either.
		var ok, denied int
		for c, n := range s.classes {
			switch {
			case c == "0 ok":
				ok += n
			case c == "0 ok, entries hidden":
				ok += n
				denied += n
			case strings.HasSuffix(c, ": "+policy.ReasonDenyRead):
				denied += n
			}
		}
		if ok == 0 || denied == 0 {
			t.Errorf("%s: %d calls succeeded and %d met deny_read: the race was not exercised", k.kind, ok, denied)
		}
	}
	if leaks > 0 {
		t.Errorf("LEAK: %d of %d calls showed the deny_read secret's content, names or size", leaks, len(jobs))
	}
}

// readRaceLayout is the write race's layout with a secret outside/: its
// files hold the secret's word and size, its folder the secret's names,
// and the trusted system file in system/ puts it under deny_read by its
// absolute path.
type readRaceLayout struct {
	raceLayout
	system string
}

func newReadRaceLayout(t *testing.T) readRaceLayout {
	l := readRaceLayout{raceLayout: newRaceLayout(t)}
	if err := os.RemoveAll(l.outside); err != nil {
		t.Fatal(err)
	}
	secret := func(what string) string {
		s := readRaceSecretWord + " " + what + "\n"
		return s + strings.Repeat("#", readRaceSecretSize-len(s)-1) + "\n"
	}
	harness.WriteTree(t, l.dir, map[string]string{
		"outside/target.txt":                           secret("target"),
		"outside/dir/f.txt":                            secret("dir f"),
		"outside/dir/" + readRaceSecretName + "-a.txt": secret("a"),
		"outside/dir/" + readRaceSecretName + "-sub/" + readRaceSecretName + "-deep.txt": secret("deep"),
		"ws/d/sub/g.txt": "inside d sub g\n",
	})
	l.system = filepath.Join(l.dir, "etc")
	harness.WriteTree(t, l.system, map[string]string{"config.yaml": "deny_read: [\"" + l.outside + "/**\"]\n"})
	return l
}

// readRaceStats counts one kind of call.
type readRaceStats struct {
	calls, leaks int
	classes      map[string]int
	examples     []string
}

func (s *readRaceStats) histogram() string {
	keys := make([]string, 0, len(s.classes))
	for k := range s.classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "[%s: %d] ", k, s.classes[k])
	}
	return b.String()
}

// runReadRaceCall execs one call and returns its class (exit status and
// error code or reason, or "hidden" for a listing that left entries out)
// and, when the call leaked, what it showed. out is the worker's write
// target, read back after a write --from.
func runReadRaceCall(bin string, env []string, ws string, args []string, out string) (class, leak string) {
	c := exec.Command(bin, args...)
	c.Env, c.Dir = env, ws
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		return "exec failed", ""
	}
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(harness.Timeout):
		c.Process.Kill()
		return "hung", fmt.Sprintf("%v: still running after %v", args, harness.Timeout)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return "exec failed", ""
	}
	var res harness.Result
	var extra struct {
		Error struct {
			Reason string `json:"reason"`
		} `json:"error"`
		Hidden int `json:"hidden"`
	}
	// Only the first JSON value: read --raw prints the bytes alone.
	_ = json.NewDecoder(bytes.NewReader(stdout.Bytes())).Decode(&res)
	_ = json.NewDecoder(bytes.NewReader(stdout.Bytes())).Decode(&extra)
	class = strconv.Itoa(code) + " " + res.Error.Code
	if extra.Error.Reason != "" {
		class += ": " + extra.Error.Reason
	}
	if code == 0 {
		class = "0 ok"
		if extra.Hidden > 0 {
			class = "0 ok, entries hidden"
		}
	}
	shown := stdout.String() + stderr.String()
	if args[0] == "write" && code == 0 {
		b, _ := os.ReadFile(out)
		shown += string(b)
	}
	switch {
	case strings.Contains(shown, readRaceSecretWord):
		leak = fmt.Sprintf("%v: the secret's content: %.200q", args, shown)
	case strings.Contains(shown, readRaceSecretName):
		leak = fmt.Sprintf("%v: a secret's name: %.300q", args, shown)
	case strings.Contains(shown, `"size":`+strconv.Itoa(readRaceSecretSize)+`,`):
		leak = fmt.Sprintf("%v: the secret's size: %.300q", args, shown)
	}
	return class, leak
}

// raceCallCount is how many calls a race test makes: normal, or underRace
// in a race-instrumented run, or what the variable env says, for a soak
// or a quick look.
func raceCallCount(t *testing.T, env string, normal, underRace int) int {
	t.Helper()
	n := normal
	if raceEnabled {
		n = underRace
	}
	if s := os.Getenv(env); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: want a positive number", env, s)
		}
		n = v
	}
	return n
}
