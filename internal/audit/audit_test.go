package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// logDir is a folder the trusted-file checks accept: t.TempDir's
// folders are this user's and not open to others.
func logDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writeLog writes n network events to a new log and returns its path.
func writeLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(logDir(t), "audit.jsonl")
	l, err := Open(path, "1-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Write(Event{Event: EventNetwork, Network: &Network{Verdict: NetworkAllowed, Host: fmt.Sprintf("h%d.test", i), Port: 443}}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func verifyFile(t *testing.T, path, head string) (Verified, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Verify(f, path, head)
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestVerifyFindsTheFirstBadLine: a log as written verifies; a line
// removed, changed or moved fails with FS_AUDIT_BROKEN naming the first
// line at fault.
func TestVerifyFindsTheFirstBadLine(t *testing.T) {
	path := writeLog(t, 5)
	v, err := verifyFile(t, path, "")
	if err != nil || v.Lines != 5 {
		t.Fatalf("as written: %+v, %v", v, err)
	}
	orig := lines(t, path)
	for _, tc := range []struct {
		name   string
		change func(ls []string) []string
		line   int64
	}{
		{"removed", func(ls []string) []string { return append(ls[:2:2], ls[3:]...) }, 3},
		{"removed first", func(ls []string) []string { return ls[1:] }, 1},
		{"changed", func(ls []string) []string { ls[3] = strings.Replace(ls[3], "h3.test", "h9.test", 1); return ls }, 4},
		{"changed, hash made again", func(ls []string) []string {
			ln := strings.TrimSuffix(ls[1], "\n")
			var x line
			body, _, _ := splitHash([]byte(ln))
			json.Unmarshal(append(body, '}'), &x)
			x.Network.Host = "evil.test"
			out, _ := encode(x)
			ls[1] = string(out)
			return ls
		}, 3},
		{"moved", func(ls []string) []string { ls[1], ls[2] = ls[2], ls[1]; return ls }, 2},
		{"cut mid-line", func(ls []string) []string { ls[4] = ls[4][:20]; return ls }, 5},
		{"added", func(ls []string) []string { return append(ls[:2:2], append([]string{ls[0]}, ls[2:]...)...) }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := tc.change(append([]string{}, orig...))
			os.WriteFile(path, []byte(strings.Join(ls, "")), 0o600)
			_, err := verifyFile(t, path, "")
			if fserr.CodeOf(err) != fserr.AuditBroken {
				t.Fatalf("want FS_AUDIT_BROKEN, got %v", err)
			}
			var fe *fserr.Error
			if !errorsAs(err, &fe) || fe.Detail.(BrokenDetail).Line != tc.line || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.line)) {
				t.Errorf("want line %d: %v", tc.line, err)
			}
		})
	}
}

func errorsAs(err error, fe **fserr.Error) bool {
	e, ok := err.(*fserr.Error)
	*fe = e
	return ok
}

// TestVerifyHead: the chain cannot tell a log cut short at its end from
// a true one; the head kept elsewhere can.
func TestVerifyHead(t *testing.T) {
	path := writeLog(t, 4)
	v, err := verifyFile(t, path, "")
	if err != nil {
		t.Fatal(err)
	}
	ls := lines(t, path)
	os.WriteFile(path, []byte(strings.Join(ls[:3], "")), 0o600)
	if _, err := verifyFile(t, path, ""); err != nil {
		t.Fatalf("cut at its end, the chain still holds (what the head is for): %v", err)
	}
	if _, err := verifyFile(t, path, v.Head); fserr.CodeOf(err) != fserr.AuditBroken {
		t.Errorf("cut before the head kept: want FS_AUDIT_BROKEN, got %v", err)
	}
	// A log that goes on past the head passes.
	os.WriteFile(path, []byte(strings.Join(ls, "")), 0o600)
	l, _ := Open(path, "3-4", nil)
	l.Write(Event{Event: EventSessionEnd, End: &End{}})
	if _, err := verifyFile(t, path, v.Head); err != nil {
		t.Errorf("appended after the head: %v", err)
	}
}

// TestWriteConcurrent: writers of one log, each with a Log of its own
// (as concurrent sessions have), never break the chain or a line.
func TestWriteConcurrent(t *testing.T) {
	path := filepath.Join(logDir(t), "audit.jsonl")
	var wg sync.WaitGroup
	for w := range 8 {
		l, err := Open(path, fmt.Sprintf("%d-1", w), nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				l.Write(Event{Event: EventNetwork, Network: &Network{Verdict: NetworkRefused, Host: strings.Repeat("x", 3000), Port: i + 1}})
			}
		}()
	}
	wg.Wait()
	v, err := verifyFile(t, path, "")
	if err != nil || v.Lines != 200 {
		t.Fatalf("%+v %v", v, err)
	}
}

// TestOpenRefuses: a log the session could write, or that someone but
// root and its owner could, is refused before the session starts.
func TestOpenRefuses(t *testing.T) {
	dir := logDir(t)
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	os.WriteFile(filepath.Join(dir, "target"), nil, 0o600)
	os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "gw"), nil, 0o620)
	os.Chmod(filepath.Join(dir, "gw"), 0o620)
	os.WriteFile(filepath.Join(dir, "linked"), nil, 0o600)
	os.Link(filepath.Join(dir, "linked"), filepath.Join(dir, "linked2"))
	for _, tc := range []struct{ name, path, want string }{
		{"in a root", filepath.Join(dir, "ws", "audit"), "writable root"},
		{"open folder", filepath.Join(open, "audit"), "not trusted"},
		{"symlink", filepath.Join(dir, "link"), "a symlink"},
		{"group-writable", filepath.Join(dir, "gw"), "not trusted"},
		{"hard link", filepath.Join(dir, "linked"), "more than one link"},
		{"relative", "audit.jsonl", "absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.MkdirAll(filepath.Join(dir, "ws"), 0o700)
			_, err := Open(tc.path, "1-1", []string{filepath.Join(dir, "ws")})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want a refusal saying %q, got %v", tc.want, err)
			}
			if tc.name == "in a root" || tc.name == "open folder" {
				if _, err := os.Lstat(tc.path); err == nil {
					t.Errorf("refused, yet %s was made", tc.path)
				}
			}
		})
	}
}

// TestEventsHoldNoContent: a write's content, its diff and the command
// line that carried it are in no event, only their size and hash.
func TestEventsHoldNoContent(t *testing.T) {
	secret := "s3cret-content-4711"
	req := policy.EscalationRequest{Kind: policy.KindFile, Op: "write", Path: "x", Diff: map[string]any{"text": "+" + secret}}
	req.Caller = []string{"dsh-fs", "write", "x", "--content", secret}
	var b bytes.Buffer
	for _, e := range []Event{Asked(req, policy.ApprovalCommand), Answered(req, policy.ApprovalCommand, nil)} {
		json.NewEncoder(&b).Encode(e)
	}
	if strings.Contains(b.String(), secret) {
		t.Errorf("the content is in the log:\n%s", b.String())
	}
	if !strings.Contains(b.String(), `"diff":{"bytes":`) || !strings.Contains(b.String(), `"caller":{"bytes":`) {
		t.Errorf("no summary of the diff and the command line:\n%s", b.String())
	}
}

// TestRelayTakesEscalationsOnly: the brokered call's pipe carries the
// escalations' lines; anything else on it (a forged start, an unknown
// field, a line that is not JSON) ends the relay and is not written.
func TestRelayTakesEscalationsOnly(t *testing.T) {
	path := filepath.Join(logDir(t), "audit.jsonl")
	l, err := Open(path, "1-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := policy.EscalationRequest{Kind: policy.KindFile, Op: "write", Path: "x"}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(Asked(req, policy.ApprovalTrust))
	enc.Encode(Answered(req, policy.ApprovalTrust, nil))
	in.WriteString(`{"event":"session_start","start":{"mode":"danger-full-access"}}` + "\n")
	enc.Encode(Asked(req, policy.ApprovalTrust))
	l.Relay(&in)
	v, err := verifyFile(t, path, "")
	if err != nil || v.Lines != 2 || v.Sessions != 0 {
		t.Errorf("want the two escalation lines only: %+v, %v\n%s", v, err, strings.Join(lines(t, path), ""))
	}
}
