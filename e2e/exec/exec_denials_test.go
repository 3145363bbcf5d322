//go:build unix

package exec

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// denialsOut is what `dsh-fs denials` prints, as far as these tests read it.
type denialsOut struct {
	OK      bool `json:"ok"`
	Session bool `json:"session"`
	Entries []struct {
		Layer, Op, Path, Host, Rule, Escalation string
		WayForward                              string `json:"way_forward"`
		Count                                   int
	} `json:"entries"`
	Explained []struct {
		Path, Resolved, Op, Layer, Rule, Escalation string
		WayForward                                  string `json:"way_forward"`
	} `json:"explained"`
}

// TestExecDenialLog (issue 40): a session that is refused once of each
// kind finds each with one call, `dsh-fs denials`, naming the layer and
// the rule: a connection the proxy refused and an escalation the
// approver declined are in the supervisor's log, each twice and so one
// entry with a count of 2; the shell's own refusals (a write outside the
// roots: Read-only file system; a write to .git/config: a read-only
// bind), which the kernel gives, are in it as the supervisor read them in
// the shell's output, and are explained for the paths named, as is a
// deny_read file read empty. The session
// cannot write its log. As root and as the ordinary user.
func TestExecDenialLog(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
		harness.WriteTree(t, s.ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "secret.env": "TOKEN=1\n"})
		out := filepath.Join(s.home, "out")
		harness.WriteTree(t, out, map[string]string{"x.txt": "x\n"})
		if s.agent {
			chownTree(t, s.ws)
			chownTree(t, s.home)
		}
		s.config(t, fmt.Sprintf("tmp: false\nnetwork: allowlist\nnetwork_allow: [allowed.test]\ndeny_read: [\"**/secret.env\"]\n"+
			"approval: command\napproval_command: [/bin/sh, -c, \"cat > /dev/null; exit 1\"]\n"))
		script := fmt.Sprintf(`echo x > %[2]s/x.txt; echo "outside=$?"
echo x >> .git/config; echo "protected=$?"
echo "secret=[$(cat secret.env)]"
curl -sS -m 10 -o /dev/null http://denied.test:%[1]s/; curl -sS -m 10 -o /dev/null http://denied.test:%[1]s/
dsh-fs write %[2]s/x.txt --content pwned --overwrite --escalate danger-full-access >/dev/null; echo "escalate=$?"
dsh-fs write %[2]s/x.txt --content pwned --overwrite --escalate danger-full-access >/dev/null; echo "escalate=$?"
echo forged > "$(dirname "$DSH_FS_SESSION")/denials/log.json"; echo "forge=$?"
echo "DENIALS $(dsh-fs denials %[2]s/x.txt .git/config secret.env)"
dsh-fs denials --output text
`, port, out)
		stdout, stderr := runWithHosts(t, s, script)
		for _, want := range []string{"secret=[]", "escalate=3\n"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the session did not print %q:\n%s\nstderr: %s", want, stdout, stderr)
			}
		}
		for _, bad := range []string{"outside=0", "protected=0", "forge=0", "TOKEN"} {
			if strings.Contains(stdout, bad) {
				t.Errorf("%s:\n%s", bad, stdout)
			}
		}
		_, line, ok := strings.Cut(stdout, "DENIALS ")
		line, _, _ = strings.Cut(line, "\n")
		var d denialsOut
		if !ok || json.Unmarshal([]byte(line), &d) != nil || !d.OK || !d.Session {
			t.Fatalf("no denials result:\n%s\nstderr: %s", stdout, stderr)
		}
		// The supervisor's log: each refusal once, with its count; the
		// shell's own refusals, which the supervisor read in the shell's
		// output (exec's stderr is a pipe here), with the policy's rule.
		shell := map[string]string{out + "/x.txt": "mount (read-only tree)", s.ws + "/.git/config": "mount (read-only bind)"}
		var proxy, broker int
		for _, e := range d.Entries {
			switch e.Layer {
			case "shell":
				if rule, ok := shell[e.Path]; ok && strings.HasPrefix(e.Rule, rule) {
					delete(shell, e.Path)
				} else if !strings.HasSuffix(e.Path, "/denials/log.json") {
					t.Errorf("unexpected shell entry %+v", e)
				}
				continue
			case "proxy":
				proxy++
			case "broker":
				broker++
			}
			switch e.Layer {
			case "proxy":
				if e.Op != "connect" || e.Host != "denied.test:"+port || e.Rule != "not in network_allow" || e.Count != 2 ||
					!strings.Contains(e.WayForward, "network_allow") || !strings.HasPrefix(e.Escalation, "no") {
					t.Errorf("proxy entry %+v; want denied.test:%s refused twice, not in network_allow", e, port)
				}
			case "broker":
				if e.Op != "write" || e.Path != out+"/x.txt" || !strings.HasPrefix(e.Rule, "escalation not approved") || e.Count != 2 ||
					!strings.Contains(e.Escalation, "approver (command)") {
					t.Errorf("broker entry %+v; want the declined write of %s/x.txt twice", e, out)
				}
			default:
				t.Errorf("unexpected entry %+v", e)
			}
		}
		if proxy != 1 || broker != 1 || len(shell) > 0 {
			t.Errorf("want one proxy entry, one broker entry and a shell entry for each of %v; got %+v", shell, d.Entries)
		}
		// The shell's own refusals, explained for the paths named.
		want := map[string][2]string{
			out + "/x.txt write":        {"mount (read-only tree)", "outside the writable roots"},
			s.ws + "/.git/config write": {"mount (read-only bind)", "protected (" + s.ws + "/.git)"},
			s.ws + "/secret.env read":   {"mount (hidden)", "deny_read (**/secret.env)"},
		}
		for _, e := range d.Explained {
			w, ok := want[e.Resolved+" "+e.Op]
			if !ok {
				continue
			}
			delete(want, e.Resolved+" "+e.Op)
			if e.Layer != w[0] || !strings.Contains(e.Rule, w[1]) {
				t.Errorf("%s %s: layer %q, rule %q; want %q, %q", e.Op, e.Resolved, e.Layer, e.Rule, w[0], w[1])
			}
		}
		for k := range want {
			t.Errorf("%s not explained: %+v", k, d.Explained)
		}
		// The text form, through the same renderer.
		if !strings.Contains(stdout, "connect denied.test:"+port+" ×2: proxy: not in network_allow") ||
			!strings.Contains(stdout, "write "+out+"/x.txt ×2: broker: escalation not approved") {
			t.Errorf("the text form:\n%s", stdout)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "x.txt")); string(b) != "x\n" {
			t.Errorf("x.txt changed: %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(s.ws, ".git/config")); string(b) != "[core]\n" {
			t.Errorf(".git/config changed: %q", b)
		}
	})
}

// TestDenialsOutsideSession: outside a session there is no log, and a
// path is still explained (the file tool's rule; the shell is not fenced).
func TestDenialsOutsideSession(t *testing.T) {
	ws := t.TempDir()
	env := execEnv(t, ws)
	code, _, stdout, stderr := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "denials", "/etc/hosts"), nil)
	var d denialsOut
	if code != 0 || json.Unmarshal([]byte(stdout), &d) != nil || d.Session || len(d.Entries) != 0 {
		t.Fatalf("exit %d, %q, %q; want no session and no entries", code, stdout, stderr)
	}
	if len(d.Explained) != 2 || d.Explained[0].Op != "write" || !strings.Contains(d.Explained[0].Rule, "not fenced") {
		t.Errorf("explained %+v; want the write refused by the file tool, the shell not fenced", d.Explained)
	}
}
