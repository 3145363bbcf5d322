//go:build unix

package race

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"golang.org/x/sys/unix"
)

// exchangeLoop is a test-only command, the attacker of
// TestProtectedExchangeRace: it exchanges two entries of a folder
// (renameat2 RENAME_EXCHANGE) as fast as it can, prints "ready" once it
// runs, and on SIGTERM (or after SECONDS) prints how many exchanges it
// made and exits.
//
//	exchange-loop DIR A B SECONDS
func exchangeLoop() {
	args := os.Args[1:]
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: exchange-loop DIR A B SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(args[3], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exchange-loop:", err)
		os.Exit(2)
	}
	dirfd, err := unix.Open(args[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exchange-loop:", err)
		os.Exit(1)
	}
	var stop atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() { <-sig; stop.Store(true) }()
	until := time.Now().Add(time.Duration(secs * float64(time.Second)))
	fmt.Println("ready")
	n, failed := 0, 0
	for i := 0; !stop.Load(); i++ {
		if i%256 == 0 && time.Now().After(until) {
			break
		}
		if err := exchange(dirfd, args[1], args[2]); err != nil {
			failed++
		} else {
			n++
		}
	}
	fmt.Printf("exchanges=%d failed=%d\n", n, failed)
}

// startExchangeLoop starts exchange-loop on dir's entries a and b and
// returns a function that stops it and returns its count.
func startExchangeLoop(t *testing.T, dir, a, b string, most time.Duration) func() string {
	t.Helper()
	bin, err := exec.LookPath("exchange-loop")
	if err != nil {
		t.Fatalf("exchange-loop is not on $PATH: %v", err)
	}
	c := exec.Command(bin, dir, a, b, strconv.FormatFloat(most.Seconds(), 'f', 1, 64))
	c.SysProcAttr = dieWithParent()
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		c.Process.Kill()
		c.Wait()
		t.Fatalf("exchange-loop did not start: %q", sc.Text())
	}
	t.Cleanup(func() { c.Process.Kill() })
	return func() string {
		c.Process.Signal(syscall.SIGTERM)
		var last string
		for sc.Scan() {
			last = sc.Text()
		}
		if err := c.Wait(); err != nil || !strings.HasPrefix(last, "exchanges=") {
			t.Fatalf("exchange-loop: %v, %q", err, last)
		}
		return last
	}
}

// TestProtectedExchangeRace: a process exchanges the real folders d and
// .git (a repository: HEAD, objects/, refs/, config, hooks/) in a loop,
// while dsh-fs writes d/hooks/planted-N and d/config over and over.
// Every write is checked as a write into d; none may land in the
// repository's hooks or config, whatever name it has when the race is
// over (since issue 23 the rest of a git directory is writable, so the
// writes aim at the parts that stay protected).
func TestProtectedExchangeRace(t *testing.T) {
	calls, most := 300, 25*time.Second
	if testing.Short() {
		calls = 100
	}
	ws := t.TempDir()
	harness.WriteTree(t, ws, map[string]string{
		".git/HEAD":             "ref: refs/heads/main\n",
		".git/config":           "[core]\n\trepositoryformatversion = 0\n",
		".git/objects/.keep":    "",
		".git/refs/heads/.keep": "",
		".git/hooks/.keep":      "",
		"d/config":              "d config\n",
		"d/hooks/.keep":         "",
	})
	env := harness.Env(t, ws)
	bin := harness.Bin(t)
	stop := startExchangeLoop(t, ws, "d", ".git", most+10*time.Second)

	var next atomic.Int64
	var mu sync.Mutex
	hist := map[string]int{}
	deadline := time.Now().Add(most)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				n := int(next.Add(1))
				if n > calls || time.Now().After(deadline) {
					return
				}
				args := []string{"write", fmt.Sprintf("d/hooks/planted-%d", n), "--content", "planted\n", "--overwrite"}
				if n%4 == 0 {
					args[1] = "d/config"
				}
				code, res, _, _ := harness.Run(t, harness.Cmd(bin, env, ws, args...), nil)
				mu.Lock()
				hist[fmt.Sprintf("%d %s", code, res.Error.Code)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%s; calls by exit status and code: %v", stop(), hist)

	// The repository is whichever folder holds HEAD now.
	repo := filepath.Join(ws, ".git")
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		repo = filepath.Join(ws, "d")
	}
	landed := 0
	for _, name := range harness.DirNames(t, filepath.Join(repo, "hooks")) {
		if strings.HasPrefix(name, "planted-") {
			landed++
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "config")); string(b) != "[core]\n\trepositoryformatversion = 0\n" {
		landed++
		t.Errorf("the repository's config was replaced: %q", b)
	}
	if landed > 0 {
		t.Errorf("%d writes checked as d/… landed in the repository", landed)
	}
	if hist["0 "] == 0 {
		t.Errorf("no write succeeded: the race proves nothing")
	}
	if len(findLitter(t, ws)) > 0 {
		t.Errorf("temp files left: %v", findLitter(t, ws))
	}
}
