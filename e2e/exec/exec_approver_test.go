//go:build unix

package exec

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestExecApproverNotForged (issue 14): the approver channel a brokered
// call asks (approval supervisor) is trusted only when it leads to the
// session's supervisor. A process that names a live session's record,
// says it is the brokered call and hands over a socket of its own that
// answers yes gets no approval: nothing is written outside.
func TestExecApproverNotForged(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	env := harness.Env(t, ws)
	recordFile := filepath.Join(ws, "record-path")
	// A live session, whose record the forger names.
	c := exec.Command(harness.Bin(t), "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", `echo "$DSH_FS_SESSION" > record-path; sleep 20`)
	c.Env, c.Dir = env, ws
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	var record string
	for deadline := time.Now().Add(harness.Timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(recordFile); err == nil && len(b) > 1 {
			record = strings.TrimSpace(string(b))
			break
		}
	}
	if record == "" {
		t.Fatal("the session never named its record")
	}

	forgeApproval(t, env, ws, record, filepath.Join(outside, "x.txt"), "a forged approver", "escalation not approved")
}

// forgeApproval runs an escalating write of target as a brokered call of
// the session of record, handing it an approver socket this test process
// made, which answers yes; the write must be refused, saying refusal,
// and target never made. who names the forger in a failure.
func forgeApproval(t *testing.T, env []string, ws, record, target, who, refusal string) {
	t.Helper()
	mine, theirs, err := wire.NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	go wire.AnswerAsks(mine, func(wire.Ask) error { return nil })
	w := exec.Command(harness.Bin(t), "write", target, "--content", "forged\n", "--escalate", "danger-full-access")
	w.Env = append(env, wire.Env+"="+record, wire.BrokeredEnv+"=1", wire.ApproverEnv+"=3")
	w.Dir, w.ExtraFiles = ws, []*os.File{theirs}
	var out bytes.Buffer
	w.Stdout, w.Stderr = &out, &out
	w.Run()
	theirs.Close()
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("%s got a write outside:\n%s", who, out.String())
	}
	if !strings.Contains(out.String(), refusal) {
		t.Errorf("want a refusal saying %q, got:\n%s", refusal, out.String())
	}
}

// TestExecApproverPidReused (issue 14): a supervisor killed with SIGKILL
// leaves its record behind, naming its pid, which another process can
// come to hold. That process is not the supervisor: the record names the
// supervisor by its pid and its start time, and an approver channel from
// a process with the pid but another start is refused. Here the test
// process stands for the one that came to hold the pid: the record names
// its pid with the start time of an earlier process.
func TestExecApproverPidReused(t *testing.T) {
	ws, outside := harness.MCPLayout(t)
	env := harness.Env(t, ws)
	// A live session's record, copied: a record dsh-fs wrote, for the
	// same workspace.
	recordFile := filepath.Join(ws, "record-path")
	c := exec.Command(harness.Bin(t), "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", `cat "$DSH_FS_SESSION" > record-copy; echo "$DSH_FS_SESSION" > record-path`)
	c.Env, c.Dir = env, ws
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("exec: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(recordFile); err != nil || len(b) < 2 {
		t.Fatalf("the session never named its record: %v", err)
	}
	var rec map[string]any
	data, err := os.ReadFile(filepath.Join(ws, "record-copy"))
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("the record: %v\n%s", err, data)
	}
	rec["supervisor_pid"] = os.Getpid()
	rec["supervisor_start"] = 1 // an earlier process's, not this one's
	// A private folder beside the sessions' own, not named session-*:
	// a session starting meanwhile (another test's) removes the folders
	// of records whose supervisor is gone, as this one's is.
	made, err := wire.Dir("", []string{ws})
	if err != nil {
		t.Skipf("no private folder for a record: %v", err)
	}
	wire.Remove(made)
	dir := filepath.Join(filepath.Dir(made), "forged-"+filepath.Base(made))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	defer wire.Remove(dir)
	forged, _ := json.Marshal(rec)
	record := wire.RecordPath(dir)
	if err := os.WriteFile(record, forged, 0o400); err != nil {
		t.Fatal(err)
	}

	// Since issue 21 the record itself is refused: it is not in a
	// session folder, and its supervisor is gone. CheckApprover's own
	// refusal of the pid is TestCheckApprover's.
	forgeApproval(t, env, ws, record, filepath.Join(outside, "x.txt"), "the process holding a dead supervisor's pid", "session record not trusted")
}
