//go:build unix

package exec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// brokerSend is a test-only command that plays a process of the session
// talking to the supervisor's channel (fd 3) by hand: it sends the JSON
// object given as its argument as one request, with its reply socket,
// and prints the reply.
//
//	broker-send JSON
func brokerSend() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: broker-send JSON")
		os.Exit(100)
	}
	// No SOCK_CLOEXEC (macOS has none): this program starts nothing.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(100)
	}
	unix.CloseOnExec(pair[0])
	unix.CloseOnExec(pair[1])
	rights := unix.UnixRights(pair[1])
	if err := unix.Sendmsg(3, []byte{'r'}, rights, nil, 0); err != nil {
		fmt.Fprintln(os.Stderr, "send:", err)
		os.Exit(100)
	}
	unix.Close(pair[1])
	conn := os.NewFile(uintptr(pair[0]), "reply")
	conn.WriteString(os.Args[1] + "\n")
	unix.Shutdown(pair[0], unix.SHUT_WR)
	var reply json.RawMessage
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		fmt.Println("no reply:", err)
		os.Exit(1)
	}
	fmt.Printf("reply: %s\n", reply)
}

// TestExecBrokerRunsOnlyEscalations (issue 21): the supervisor ran a
// forwarded argv when any argument was spelled --escalate, and cobra
// parses `write x --content --escalate` as a plain write whose content
// is "--escalate": any process of the session that writes that argv to
// the channel got a write run by the supervisor, outside its own layers
// and unapproved. Here the process is in a nested read-only session,
// whose kernel layer refuses every write; the supervisor's run wrote x.
// The channel now takes typed requests only, and one that asks for no
// escalation is refused.
func TestExecBrokerRunsOnlyEscalations(t *testing.T) {
	harness.RequireLandlock(t)
	ws := t.TempDir()
	env := execEnv(t, ws, `REQ={"args":["write","x","--content","--escalate"],"dir":"`+ws+`"}`)
	harness.WriteSystemConfig(t, env, "approval: trust\n")
	code, out, errs := execSh(t, env, ws, fenced(ws),
		`dsh-fs exec --mode read-only -- sh -c 'echo nested > y; broker-send "$REQ"'`)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantAbsent(t, filepath.Join(ws, "y"))
	wantAbsent(t, filepath.Join(ws, "x"))
	if !strings.Contains(out, `"refused":`) {
		t.Errorf("want the request refused:\n%s", out)
	}
}

// TestExecBrokerTypedRequests (issue 21): the channel takes a typed
// request, decoded strictly: an argv of the old kind, unknown fields, an
// operation the supervisor does not run, a request that asks for no
// escalation or carries both a write's content and an edit's edits is
// refused and runs nothing.
func TestExecBrokerTypedRequests(t *testing.T) {
	harness.RequireLandlock(t)
	ws, out := t.TempDir(), t.TempDir()
	env := execEnv(t, ws, "OUT="+out)
	harness.WriteSystemConfig(t, env, "approval: trust\n")
	targets := func(i int) string { return filepath.Join(out, fmt.Sprint(i)) }
	for i, tc := range []struct{ name, request string }{
		{"argv", fmt.Sprintf(`{"args":["write","TARGET","--content","hi","--escalate","danger-full-access"],"dir":%q}`, ws)},
		{"unknown field", `{"op":"write","escalate":"danger-full-access","write":{"path":"TARGET","content":"aGk="},"args":["x"]}`},
		{"a path beside the typed request", `{"op":"write","path":"TARGET","escalate":"danger-full-access","write":{"content":"aGk="}}`},
		{"other op", `{"op":"chmod","escalate":"danger-full-access","write":{"path":"TARGET","content":"aGk="}}`},
		{"mkdir with its path beside", `{"op":"mkdir","path":"TARGET","escalate":"danger-full-access"}`},
		{"no escalation", `{"op":"write","write":{"path":"TARGET","content":"aGk="}}`},
		{"bad mode", `{"op":"write","escalate":"root","write":{"path":"TARGET","content":"aGk="}}`},
		{"write and edit", `{"op":"write","escalate":"danger-full-access","write":{"path":"TARGET","content":"aGk="},"edit":{"edits":[{"old":"a","new":"b"}]}}`},
		{"edit without edits", `{"op":"edit","escalate":"danger-full-access","edit":{"path":"TARGET","edits":[]}}`},
		{"trailing data", `{"op":"write","escalate":"danger-full-access","write":{"path":"TARGET","content":"aGk="}} {}`},
	} {
		target := targets(i)
		tc.request = strings.ReplaceAll(tc.request, "TARGET", target)
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := execSh(t, append(env, "REQ="+tc.request), ws, fenced(ws), `broker-send "$REQ"`)
			if code != 0 || !strings.Contains(stdout, `"refused":`) {
				t.Errorf("exit %d, want a refusal in the reply\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			wantAbsent(t, target)
		})
	}
	// The well-formed request runs, as a write of the file tool would.
	target := filepath.Join(out, "x")
	ok := fmt.Sprintf(`{"op":"write","escalate":"danger-full-access","write":{"path":%q,"content":"aGk="}}`, target)
	code, stdout, stderr := execSh(t, append(env, "REQ="+ok), ws, fenced(ws), `broker-send "$REQ"`)
	if code != 0 || !strings.Contains(stdout, `"status":0`) || !strings.Contains(stdout, `\"escalated\":true`) {
		t.Errorf("a typed request: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	wantContent(t, target, "hi")
	_ = wire.BrokerEnv
}

// TestExecEscalatedWritePinned (issue 21): the supervisor carried out an
// approved write through a plain open that follows symlinks, deciding
// nothing on what it opened: the session swaps a folder of the path for
// a symlink while the approver looks, and the write lands where the
// approver never saw. Here the approver itself makes the swap as it
// answers (the worst timing the session could reach), for a write of a
// protected path in the workspace that needs danger-full-access. The
// write must not land in the victim folder: danger-full-access widens
// where a write may land, never how its path is opened, and a path
// that changed since it was shown is FS_STALE.
func TestExecEscalatedWritePinned(t *testing.T) {
	harness.RequireLandlock(t)
	ws, victim := t.TempDir(), t.TempDir()
	harness.WriteTree(t, ws, map[string]string{"d/keep": "k"})
	swap := filepath.Join(t.TempDir(), "swap.sh")
	os.WriteFile(swap, []byte(fmt.Sprintf("#!/bin/sh\ncat >/dev/null\nmv %q %q && ln -s %q %q\n", filepath.Join(ws, "d"), filepath.Join(ws, "d.shown"), victim, filepath.Join(ws, "d"))), 0o755)
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "approval: command\napproval_command: ["+fmt.Sprintf("%q", swap)+"]\n")
	for _, tc := range []struct{ name, script string }{
		{"mkdir", `dsh-fs write d/.git/config --mkdir --content planted --escalate danger-full-access`},
		{"existing folder", `dsh-fs write d/.git/config --content planted --escalate danger-full-access`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(ws, "d"))
			os.RemoveAll(filepath.Join(ws, "d.shown"))
			harness.WriteTree(t, ws, map[string]string{"d/keep": "k"})
			if tc.name == "existing folder" {
				os.MkdirAll(filepath.Join(ws, "d/.git"), 0o755)
				os.MkdirAll(filepath.Join(victim, ".git"), 0o755)
			}
			code, out, errs := execSh(t, env, ws, fenced(ws), tc.script)
			wantAbsent(t, filepath.Join(victim, ".git/config"))
			if code == 0 || !strings.Contains(out, `"FS_STALE"`) {
				t.Errorf("exit %d, want FS_STALE\nstdout: %s\nstderr: %s", code, out, errs)
			}
		})
	}
}
