//go:build unix

package exec

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// auditLine is the part of an audit log's line the tests read.
type auditLine struct {
	Seq        int64  `json:"seq"`
	Session    string `json:"session"`
	Event      string `json:"event"`
	Escalation *struct {
		Approval string `json:"approval"`
		Op       string `json:"op"`
		Resolved string `json:"resolved"`
		Approved *bool  `json:"approved"`
		Diff     *struct {
			Bytes int `json:"bytes"`
		} `json:"diff"`
	} `json:"escalation"`
	Call *struct {
		Op        string `json:"op"`
		OK        bool   `json:"ok"`
		Escalated bool   `json:"escalated"`
		Input     *struct {
			Bytes  int    `json:"bytes"`
			SHA256 string `json:"sha256"`
		} `json:"input"`
	} `json:"call"`
	Network *struct {
		Verdict string `json:"verdict"`
		Host    string `json:"host"`
	} `json:"network"`
	Start *struct {
		Mode    string `json:"mode"`
		Sources []struct {
			Origin string `json:"origin"`
		} `json:"sources"`
	} `json:"start"`
	End *struct {
		Status int `json:"status"`
	} `json:"end"`
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	var out []auditLine
	for _, ln := range strings.Split(strings.TrimSpace(harness.ReadFile(t, path)), "\n") {
		var l auditLine
		if err := json.Unmarshal([]byte(ln), &l); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, ln)
		}
		out = append(out, l)
	}
	return out
}

// auditVerify runs dsh-fs audit verify FILE outside any session and
// returns its exit status and output.
func auditVerify(t *testing.T, file string, flags ...string) (int, string) {
	t.Helper()
	c := exec.Command(harness.Bin(t), append([]string{"audit", "verify", file}, flags...)...)
	out, _ := c.CombinedOutput()
	return c.ProcessState.ExitCode(), string(out)
}

// auditFolder is a fresh folder outside the session's roots for the
// audit log, the session's user's own (0700).
func auditFolder(t *testing.T, s *socketSession) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(s.home), "audit")
	if !s.agent {
		dir = filepath.Join(harness.CanonicalTemp(t), "audit")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.ownBy(dir)
	return dir
}

// approveFilesOnly is an approval_command that approves every change of
// files and no network host.
const approveFilesOnly = `req=$(cat); case "$req" in *'"kind":"network_host"'*) exit 1;; esac; exit 0`

// TestExecAuditLog (issue 44): a session that escalates (approved by an
// approving command), writes through the broker and is refused a host
// (put to the approver, which refuses it) leaves a line for each in the
// trusted audit_log, with its start and its end; the session itself
// cannot write the log; dsh-fs audit verify
// passes, and fails on a line removed, changed or moved, naming it; the
// content written is nowhere in the log. Before, nothing persisted:
// exec only printed network_refused on its stderr, and audit_log was an
// unknown key (FS_CONFIG_INVALID).
func TestExecAuditLog(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
		log := filepath.Join(auditFolder(t, s), "audit.jsonl")
		secret := make([]byte, 12)
		rand.Read(secret)
		content := "audit-content-" + hex.EncodeToString(secret)
		target := filepath.Join(s.home, "written.txt")
		s.config(t, fmt.Sprintf("tmp: false\nnetwork: allowlist\nnetwork_allow: [allowed.test, \"127.0.0.1:%s\"]\n"+
			"network_approval: command\napproval: command\napproval_command: [/bin/sh, -c, %q]\naudit_log: %s\n", port, approveFilesOnly, log))
		script := fmt.Sprintf(`dsh-fs write %s --content %s --escalate danger-full-access --reason "the notes live outside"; echo "write=$?"
curl -sS -m 20 http://allowed.test:%[3]s/; echo "allowed=$?"
curl -sS -m 20 http://denied.test:%[3]s/; echo "denied=$?"
echo forged >> %[4]s; echo "append=$?"`, target, content, port, log)
		out, errs := runWithHosts(t, s, script)
		if !strings.Contains(out, "write=0") || !strings.Contains(out, "hello from outside") || !strings.Contains(out, "refuses denied.test") {
			t.Fatalf("the session did not run as planned:\n%s\nstderr: %s", out, errs)
		}
		if strings.Contains(out, "append=0") {
			t.Errorf("the session appended to its audit log:\n%s", out)
		}
		wantContent(t, target, content)
		raw := harness.ReadFile(t, log)
		if strings.Contains(raw, content) || strings.Contains(raw, "forged") {
			t.Errorf("the log holds the content written, or the session's line:\n%s", raw)
		}
		lines := readAudit(t, log)
		seen := map[string]bool{}
		for i, l := range lines {
			if l.Seq != int64(i+1) || l.Session == "" {
				t.Errorf("line %d: seq %d, session %q", i+1, l.Seq, l.Session)
			}
			switch {
			case l.Event == "session_start" && l.Start != nil && l.Start.Mode == "workspace-write" && len(l.Start.Sources) > 0:
				seen["start"] = true
			case l.Event == "escalation_asked" && l.Escalation.Approval == "command" && l.Escalation.Resolved == target && l.Escalation.Diff != nil:
				seen["asked"] = true
			case l.Event == "escalation_answered" && l.Escalation.Approved != nil && *l.Escalation.Approved:
				seen["approved"] = true
			case l.Event == "brokered_call" && l.Call.OK && l.Call.Escalated && l.Call.Input != nil && l.Call.Input.Bytes == len(content):
				seen["call"] = true
			case l.Event == "network" && l.Network.Verdict == "allowed" && l.Network.Host == "allowed.test":
				seen["allowed"] = true
			case l.Event == "network" && l.Network.Verdict == "refused" && l.Network.Host == "denied.test":
				seen["refused"] = true
			case l.Event == "network" && l.Network.Verdict == "not_approved" && l.Network.Host == "denied.test":
				seen["not approved"] = true
			case l.Event == "session_end" && l.End != nil && l.End.Status == 0 && i == len(lines)-1:
				seen["end"] = true
			}
		}
		for _, want := range []string{"start", "asked", "approved", "call", "allowed", "not approved", "refused", "end"} {
			if !seen[want] {
				t.Errorf("no %s line in the log:\n%s", want, raw)
			}
		}
		code, verified := auditVerify(t, log)
		if code != 0 || !strings.Contains(verified, fmt.Sprintf(`"lines":%d`, len(lines))) {
			t.Fatalf("verify of the log as written: exit %d\n%s", code, verified)
		}
		var head struct{ Head string }
		json.Unmarshal([]byte(verified), &head)
		orig := strings.SplitAfter(strings.TrimSuffix(raw, "\n"), "\n")
		for _, tc := range []struct {
			name   string
			change func([]string) []string
			line   int
		}{
			{"deleted", func(ls []string) []string { return append(ls[:2:2], ls[3:]...) }, 3},
			{"edited", func(ls []string) []string {
				ls[1] = strings.Replace(ls[1], `"`+target+`"`, `"/elsewhere"`, 1)
				return ls
			}, 2},
			{"reordered", func(ls []string) []string { ls[2], ls[3] = ls[3], ls[2]; return ls }, 3},
			{"cut short", func(ls []string) []string { return ls[:len(ls)-1] }, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ls := tc.change(append([]string{}, orig...))
				if strings.Join(ls, "") == raw {
					t.Fatal("the change changed nothing")
				}
				bad := filepath.Join(t.TempDir(), "audit.jsonl")
				os.WriteFile(bad, []byte(strings.Join(ls, "")), 0o600)
				code, out := auditVerify(t, bad)
				if tc.line == 0 {
					// Cut short at its end, the chain holds; the head kept
					// from the check before does not.
					if code != 0 {
						t.Errorf("cut at its end: the chain alone holds; exit %d\n%s", code, out)
					}
					code, out = auditVerify(t, bad, "--head", head.Head)
				}
				if code != 1 || !strings.Contains(out, `"code":"FS_AUDIT_BROKEN"`) || !strings.Contains(out, fmt.Sprintf(`"detail":{"line":%d}`, tc.line)) ||
					tc.line > 0 && !strings.Contains(out, fmt.Sprintf(": line %d: ", tc.line)) {
					t.Errorf("want exit 1, FS_AUDIT_BROKEN at line %d; exit %d\n%s", tc.line, code, out)
				}
			})
		}
	})
}

// TestExecAuditLogInRoot (issue 44): an audit_log the session could
// write (in its workspace) is refused before CMD runs.
func TestExecAuditLogInRoot(t *testing.T) {
	harness.RequireLandlock(t)
	ws := harness.CanonicalTemp(t)
	env := execEnv(t, ws)
	harness.WriteSystemConfig(t, env, "audit_log: "+filepath.Join(ws, "audit.jsonl")+"\n")
	code, out, errs := execSh(t, env, ws, fenced(ws), "echo CMD-RAN")
	if code != 2 || strings.Contains(out, "CMD-RAN") || !strings.Contains(out+errs, "writable root") {
		t.Errorf("want exit 2 naming the writable root, CMD not run; exit %d\n%s\n%s", code, out, errs)
	}
	wantAbsent(t, filepath.Join(ws, "audit.jsonl"))
}

// TestExecAuditConcurrentSessions (issue 44): sessions that run at once
// and share one audit log never interleave their lines or break its
// chain.
func TestExecAuditConcurrentSessions(t *testing.T) {
	harness.RequireLandlock(t)
	logDir := filepath.Join(harness.CanonicalTemp(t), "audit")
	os.Mkdir(logDir, 0o700)
	log := filepath.Join(logDir, "audit.jsonl")
	out := harness.CanonicalTemp(t)
	const sessions, writes = 4, 2
	var wg sync.WaitGroup
	for i := range sessions {
		ws := harness.CanonicalTemp(t)
		env := execEnv(t, ws)
		harness.WriteSystemConfig(t, env, "approval: trust\naudit_log: "+log+"\n")
		script := ""
		for w := range writes {
			script += fmt.Sprintf("dsh-fs write %s --content %s --escalate danger-full-access >/dev/null; ", filepath.Join(out, fmt.Sprintf("%d-%d", i, w)), strings.Repeat("x", 2000))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each session runs writes+1 processes in turn, while the
			// other sessions run theirs: one process's guard for each.
			if code, o, e := execShWithin(t, env, ws, fenced(ws), script+"true", (writes+1)*harness.Timeout); code != 0 {
				t.Errorf("session %d: exit %d\n%s\n%s", i, code, o, e)
			}
		}()
	}
	wg.Wait()
	code, verified := auditVerify(t, log)
	// Each session: its start, asked, answered and the call per write, its end.
	want := sessions * (2 + 3*writes)
	if code != 0 || !strings.Contains(verified, fmt.Sprintf(`"lines":%d`, want)) || !strings.Contains(verified, fmt.Sprintf(`"sessions":%d`, sessions)) {
		t.Errorf("want a chain of %d lines from %d sessions: exit %d\n%s", want, sessions, code, verified)
	}
}
