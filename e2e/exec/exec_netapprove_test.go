//go:build unix

package exec

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecNetworkApprovalOnlyWhereTrusted: under network: allowlist, a
// host network_allow does not name is refused, and nobody is asked,
// unless the trusted network_approval says who to ask. approval_command
// is the harness's file approver: an approver that exits 0 for every
// file used to turn the allow-list into "any host the model names".
// Before, with approval: command and an approver that exits 0, the
// session's curl to denied.test reached the server ("hello from
// outside") and the approver was asked with "op":"network" and nothing
// saying it was not a file. With network_approval: command the approver
// is asked, the request saying "kind":"network_host".
func TestExecNetworkApprovalOnlyWhereTrusted(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
		script := fmt.Sprintf(`curl -sS -m 20 http://denied.test:%s/; echo "curl=$?"`, port)
		for _, c := range []struct {
			name, setting string
			reached       bool
		}{
			{"unset", "", false},
			{"none", "network_approval: none\n", false},
			{"command", "network_approval: command\n", true},
		} {
			t.Run(c.name, func(t *testing.T) {
				record := filepath.Join(s.home, "asked-"+c.name)
				s.config(t, fmt.Sprintf("network: allowlist\nnetwork_allow: [\"127.0.0.1:%s\"]\napproval: command\napproval_command: [/bin/sh, -c, \"cat >> %s; exit 0\"]\n%s", port, record, c.setting))
				out, errs := runWithHosts(t, s, script)
				asked, _ := os.ReadFile(record)
				if got := strings.Contains(out, "hello from outside"); got != c.reached {
					t.Fatalf("reached denied.test: %v, want %v\n%s\nstderr: %s\nasked: %s", got, c.reached, out, errs, asked)
				}
				if !c.reached {
					if len(asked) != 0 {
						t.Errorf("the approver was asked about a host with no network_approval:\n%s", asked)
					}
					if !strings.Contains(out, "refuses denied.test:"+port+": not in network_allow") {
						t.Errorf("no 403 naming the host and network_allow:\n%s", out)
					}
					return
				}
				if !strings.Contains(string(asked), `"kind":"network_host"`) {
					t.Errorf("the request does not say it is a network host:\n%s", asked)
				}
				harness.Validate(t, harness.Schemas(t)["approval-request.json"], "approval-request.json", string(asked))
			})
		}
	})
}
