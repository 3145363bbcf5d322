//go:build unix

package exec

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// staleResult is the part of a stale call's result line the stale tests
// read: the FS_STALE detail, its diff when there is one.
type staleResult struct {
	Error struct {
		Code   string `json:"code"`
		Detail struct {
			SHA256   string `json:"sha256"`
			Expected string `json:"expected"`
			Diff     *struct {
				Added   int    `json:"added"`
				Removed int    `json:"removed"`
				Text    string `json:"text"`
				Omitted string `json:"omitted"`
			} `json:"diff"`
		} `json:"detail"`
	} `json:"error"`
}

// lastStale decodes the last line of out as a stale call's result.
func lastStale(t *testing.T, out string) staleResult {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r staleResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("no result line in %q: %v", out, err)
	}
	return r
}

// TestExecStaleDiff (issue 40): inside a dsh-fs exec session a read that
// returns a file's sha256 is remembered by the session's supervisor, so a
// later edit or write whose --if-match went stale through a change
// meanwhile shows the diff from what was read to what is there, with no
// content given back and no second read. Each case is its own session: a
// session remembers only its own reads, and a call outside any session
// remembers nothing. Before: FS_STALE's detail held the two hashes and no
// diff.
func TestExecStaleDiff(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	const old, now = "one\ntwo\nthree\n", "one\nzwei\nthree\n"
	sum := harness.SHA256Hex([]byte(old))
	const want = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+zwei\n three\n"
	change := `printf 'one\nzwei\nthree\n' >a.txt && `
	large := strings.Repeat("x", 300<<10) + "\n"
	for _, tc := range []struct {
		name, file, script string
		diff               bool
	}{
		{"edit after a read", old, `dsh-fs read a.txt >/dev/null && ` + change + `dsh-fs edit a.txt --old zwei --new TWO --if-match ` + sum, true},
		{"write after a windowed read", old, `dsh-fs read a.txt --limit 1 >/dev/null && ` + change + `dsh-fs write a.txt --content x --if-match ` + sum, true},
		{"patch after a read", old, `dsh-fs read a.txt >/dev/null && ` + change + `printf -- '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n' | dsh-fs patch --from - --if-match a.txt=` + sum, true},
		{"edit with no read in this session", old, change + `dsh-fs edit a.txt --old zwei --new TWO --if-match ` + sum, false},
		{"a read that cannot reach the supervisor", old, `DSH_FS_BROKER_FD=99 dsh-fs read a.txt >/dev/null && ` + change + `dsh-fs edit a.txt --old zwei --new TWO --if-match ` + sum, false},
		{"a read that failed", old, `dsh-fs read a.txt --offset -1 >/dev/null; ` + change + `dsh-fs edit a.txt --old zwei --new TWO --if-match ` + sum, false},
		{"a file over the cap", large, `dsh-fs read a.txt >/dev/null && ` + change + `dsh-fs edit a.txt --old zwei --new TWO --if-match ` + harness.SHA256Hex([]byte(large)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := sessionTemp(t)
			harness.WriteTree(t, ws, map[string]string{"a.txt": tc.file})
			code, out, errs := execSh(t, execEnv(t, ws), ws, fenced(ws), tc.script)
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errs)
			}
			r := lastStale(t, out)
			if r.Error.Code != "FS_STALE" || r.Error.Detail.SHA256 != harness.SHA256Hex([]byte(now)) {
				t.Fatalf("want FS_STALE with the current hash: %s", out)
			}
			switch d := r.Error.Detail.Diff; {
			case tc.diff && (d == nil || d.Text != want || d.Added != 1 || d.Removed != 1):
				t.Errorf("want the diff since the read %q: %s", want, out)
			case !tc.diff && d != nil:
				t.Errorf("a diff with nothing read in this session: %s", out)
			}
			wantContent(t, filepath.Join(ws, "a.txt"), now)
			// What the session remembers lives in its supervisor, never
			// on disk.
			if names := harness.DirNames(t, ws); len(names) != 1 {
				t.Errorf("the workspace holds %v, want a.txt alone", names)
			}
		})
	}
}

// TestExecStaleDiffAgent is TestExecStaleDiff's first case in a session
// of a real ordinary user, with the mount layer: the call reaches its
// supervisor over the same channel, and the supervisor, outside the
// user namespace, remembers the read.
func TestExecStaleDiffAgent(t *testing.T) {
	requireUserNamespaces(t)
	t.Parallel()
	bin, ws, system := unprivilegedSession(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	sum := harness.SHA256Hex([]byte("one\ntwo\nthree\n"))
	out := agentSession(t, bin, ws, system, `dsh-fs read a.txt >/dev/null && printf 'one\nzwei\nthree\n' >a.txt && dsh-fs edit a.txt --old zwei --new TWO --if-match `+sum+`; echo "edit=$?"`)
	want := `"diff":{"added":1,"removed":1,"text":"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+zwei\n three\n"}`
	if !strings.Contains(out, `"code":"FS_STALE"`) || !strings.Contains(out, want) || !strings.Contains(out, "edit=1") {
		t.Errorf("want FS_STALE with %s:\n%s", want, out)
	}
	wantContent(t, filepath.Join(ws, "a.txt"), "one\nzwei\nthree\n")
}

// TestExecStaleDiffEscalated: an escalated edit forwarded to the
// supervisor carries the content given back (--if-match-content), so
// the call the supervisor runs outside the session's layers refuses it
// as stale with the diff since the read; the file outside is not
// changed, and no approver is asked to approve a change that cannot
// run.
func TestExecStaleDiffEscalated(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws, out, rec := sessionTemp(t), sessionTemp(t), filepath.Join(t.TempDir(), "request.json")
	harness.WriteTree(t, ws, map[string]string{"read.txt": "one\ntwo\nthree\n"})
	harness.WriteTree(t, out, map[string]string{"a.txt": "one\nzwei\nthree\n"})
	env := execEnv(t, ws, "OUT="+out)
	harness.WriteSystemConfig(t, env, approverConfig(t, rec, 0))
	sum := harness.SHA256Hex([]byte("one\ntwo\nthree\n"))
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), `dsh-fs edit "$OUT/a.txt" --old zwei --new TWO --if-match `+sum+` --if-match-content read.txt --escalate danger-full-access`)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := lastStale(t, stdout)
	if d := r.Error.Detail.Diff; r.Error.Code != "FS_STALE" || d == nil || !strings.Contains(d.Text, "-two\n+zwei\n") {
		t.Errorf("want FS_STALE with the diff since the read: %s", stdout)
	}
	wantContent(t, filepath.Join(out, "a.txt"), "one\nzwei\nthree\n")
	wantAbsent(t, rec)
}

// TestExecStaleDiffAtOnce: a read hands what it read to the supervisor
// one way and waits for no answer, yet the stale edit that follows it at
// once, twenty times over in one session, each time with a file read
// anew, finds it: the supervisor takes a remember before the channel's
// next message, the edit's recall.
func TestExecStaleDiffAtOnce(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws := sessionTemp(t)
	harness.WriteTree(t, ws, map[string]string{"a.txt": "x\n"})
	// Forty calls in one session: the hang guard is one process's bound
	// for each, as a loaded CI under -race ran them close to 20 s in all.
	args := append(append([]string{"exec"}, fenced(ws)...), "--", "sh", "-c", `
		for i in $(seq 20); do
			printf 'one\ntwo %s\n' "$i" >a.txt
			sum=$(sha256sum <a.txt | cut -d' ' -f1)
			dsh-fs read a.txt >/dev/null
			printf 'one\nzwei %s\n' "$i" >a.txt
			dsh-fs edit a.txt --old one --new ONE --if-match "$sum" | grep -q '"text":"--- a/a.txt' && echo diff || echo none
		done`)
	code, _, out, errs := harness.RunWithin(t, harness.Cmd(harness.Bin(t), execEnv(t, ws), ws, args...), nil, 40*harness.Timeout)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if want := strings.Repeat("diff\n", 20); out != want {
		t.Errorf("want the diff since the read each time, got:\n%s", out)
	}
}
