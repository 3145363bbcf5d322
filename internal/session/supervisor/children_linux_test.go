package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestChildrenOfEveryThread: a process's child is found whichever of its
// threads forked it. The session's init forks CMD from the thread it
// locked, which need not be its main one; reading the main thread's list
// alone (the control) misses such a child, and a refusal's relative path
// was then taken from the folder the session started in.
func TestChildrenOfEveryThread(t *testing.T) {
	type started struct {
		pid, tid int
		err      error
	}
	done, release := make(chan started), make(chan struct{})
	defer close(release)
	var s started
	// Each try holds its thread until the test ends, so a try that landed
	// on the main thread keeps it and the next lands elsewhere.
	for try := 0; try < 8; try++ {
		go func() {
			runtime.LockOSThread()
			tid := unix.Gettid()
			if tid == os.Getpid() {
				done <- started{tid: tid}
				<-release
				return
			}
			c := exec.Command("sleep", "30")
			err := c.Start()
			done <- started{pid: pidOf(c), tid: tid, err: err}
			<-release
			if err == nil {
				c.Process.Kill()
				c.Wait()
			}
		}()
		if s = <-done; s.tid != os.Getpid() {
			break
		}
	}
	switch {
	case s.err != nil:
		t.Skipf("cannot start sleep: %v", s.err)
	case s.pid == 0:
		t.Fatal("every try ran on the main thread")
	}
	if got := childrenOf(os.Getpid()); !slices.Contains(got, s.pid) {
		t.Errorf("childrenOf = %v, want %d among them, the child forked by thread %d", got, s.pid, s.tid)
	}
	if slices.Contains(mainThreadChildren(os.Getpid()), s.pid) {
		t.Errorf("the control, the main thread's list alone, found %d: the test no longer shows the case", s.pid)
	}
}

func pidOf(c *exec.Cmd) int {
	if c.Process == nil {
		return 0
	}
	return c.Process.Pid
}

// mainThreadChildren is the naive read childrenOf replaced: the main
// thread's list only.
func mainThreadChildren(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}
