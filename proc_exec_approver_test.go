package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/pkg/session"
)

// TestExecApproverNotForged (issue 14): the approver channel a brokered
// call asks (approval supervisor) is trusted only when it leads to the
// session's supervisor. A process that names a live session's record,
// says it is the brokered call and hands over a socket of its own that
// answers yes gets no approval: nothing is written outside.
func TestExecApproverNotForged(t *testing.T) {
	ws, outside := mcpLayout(t)
	env := procEnv(t, ws)
	recordFile := filepath.Join(ws, "record-path")
	// A live session, whose record the forger names.
	c := exec.Command(procBin(t), "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", `echo "$DSH_FS_SESSION" > record-path; sleep 20`)
	c.Env, c.Dir = env, ws
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	var record string
	for deadline := time.Now().Add(procTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(recordFile); err == nil && len(b) > 1 {
			record = strings.TrimSpace(string(b))
			break
		}
	}
	if record == "" {
		t.Fatal("the session never named its record")
	}

	mine, theirs, err := session.NewBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	go session.AnswerAsks(mine, func(session.Ask) error { return nil })
	target := filepath.Join(outside, "x.txt")
	w := exec.Command(procBin(t), "write", target, "--content", "forged\n", "--escalate", "danger-full-access")
	w.Env = append(env, session.Env+"="+record, session.BrokeredEnv+"=1", session.ApproverEnv+"=3")
	w.Dir, w.ExtraFiles = ws, []*os.File{theirs}
	var out bytes.Buffer
	w.Stdout, w.Stderr = &out, &out
	w.Run()
	theirs.Close()
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("a forged approver got a write outside:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "escalation not approved") {
		t.Errorf("want a refusal, got:\n%s", out.String())
	}
}
