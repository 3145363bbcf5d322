package wire

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// A process in a pid namespace of its own (a session's shell, where the
// supervisor is not seen) reads a record of a supervisor this namespace
// sees gone: it cannot judge the pid there, so the place alone decides.
// Here, in the supervisor's namespace, the same record is refused.
func TestReadFromOwnPidNamespace(t *testing.T) {
	if os.Getenv("RECORD_CHILD") != "" {
		t.Skip("in the child")
	}
	dir := privateDir(t)
	r := sampleRecord()
	r.Supervisor = deadPid(t)
	p, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("Read here = %v, want the supervisor judged gone", err)
	}
	c := exec.Command(os.Args[0], "-test.run=^TestReadFromOwnPidNamespaceChild$", "-test.v")
	c.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "RECORD_CHILD="+p)
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestReadFromOwnPidNamespaceChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestReadFromOwnPidNamespaceChild is TestReadFromOwnPidNamespace's
// child, in a pid namespace of its own; it does nothing elsewhere.
func TestReadFromOwnPidNamespaceChild(t *testing.T) {
	p := os.Getenv("RECORD_CHILD")
	if p == "" {
		t.Skip("run by TestReadFromOwnPidNamespace in a pid namespace of its own")
	}
	if os.Getpid() != 1 {
		t.Fatalf("pid %d: not in a pid namespace of its own", os.Getpid())
	}
	if _, err := Read(p); err != nil {
		t.Errorf("Read from another pid namespace = %v, want the record read by its place", err)
	}
}
