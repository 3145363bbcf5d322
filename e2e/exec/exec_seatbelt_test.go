//go:build unix

package exec

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt/sbpltest"
)

// Issue 42: the Seatbelt profile of a session is proved without a Mac
// against the one shared table of cases (sbpltest.Scenarios). Here, for
// each scenario, the real binary's `policy --format sbpl` is evaluated
// (sbpltest.Compile) and each case run in a real dsh-fs exec session on
// Linux; both must give every case its expected verdict, so the macOS
// profile and Linux's enforcer agree with each other through the table.

// TestExecSeatbeltTable runs the shared table's cases in real sessions
// and through the evaluator of the profile policy prints for the same
// policy.
func TestExecSeatbeltTable(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the table's cases need the session's mount layer, which these tests make as root")
	}
	scenarios, err := sbpltest.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			work := harness.CanonicalTemp(t)
			if s.Under != "" {
				work = harness.TempUnder(t, s.Under)
			}
			if err := s.Lay(work); err != nil {
				t.Fatal(err)
			}
			for _, sock := range s.Serve {
				serveUnix(t, filepath.Join(work, sock))
			}
			port := serveTCP(t)
			ws := filepath.Join(work, "ws")
			env := execEnv(t, ws)
			harness.WriteSystemConfig(t, env, s.ConfigAt(work))
			// The evaluator first, on the layout as the session finds it.
			ev := policyProfile(t, env, ws)
			resolve := seatbelt.Realpath(seatbelt.ResolveAsMac).Resolve
			for _, c := range s.Cases {
				got, err := ev.DecideCase(c, work, port, resolve)
				if err != nil {
					t.Errorf("evaluator: %s: %v", c, err)
				} else if got != c.Allow {
					t.Errorf("evaluator: %s: allow=%t", c, got)
				}
			}
			script := tableScript(t, s, work, port)
			code, out, errs := execShWithin(t, env, ws, fenced(ws), script, 4*harness.Timeout)
			if code != 0 {
				t.Fatalf("exec: exit %d\n%s\n%s", code, out, errs)
			}
			for i, c := range s.Cases {
				want := fmt.Sprintf("case %d deny", i)
				if c.Allow {
					want = fmt.Sprintf("case %d allow", i)
				}
				if !strings.Contains(out, want+"\n") {
					t.Errorf("linux session: %s: want %q in\n%s", c, want, out)
				}
			}
		})
	}
}

// policyProfile is the profile `dsh-fs policy --format sbpl` prints for
// a session of ws under env, compiled with its parameters.
func policyProfile(t *testing.T, env []string, ws string) *sbpltest.Profile {
	t.Helper()
	code, _, out, errs := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, append([]string{"policy", "--format", "sbpl"}, fenced(ws)...)...), nil)
	if code != 0 {
		t.Fatalf("policy --format sbpl: exit %d\n%s\n%s", code, out, errs)
	}
	text, tail, ok := strings.Cut(out, "; parameters:")
	if !ok {
		t.Fatalf("no parameters in\n%s", out)
	}
	params := map[string]string{}
	for _, line := range strings.Split(tail, "\n") {
		if kv, ok := strings.CutPrefix(line, "; -D"); ok {
			name, value, _ := strings.Cut(kv, "=")
			params[name] = value
		}
	}
	p, err := sbpltest.Compile(text, params)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return p
}

// tableScript is the shell script that runs each case of s in order and
// prints "case N allow" where it succeeded, "case N deny" where not. A
// read succeeds only where it gives the file's content: a deny_read file
// reads as empty in a session.
func tableScript(t *testing.T, s sbpltest.Scenario, work string, port int) string {
	t.Helper()
	var b strings.Builder
	for i, c := range s.Cases {
		p := shellQuote(filepath.Join(work, filepath.FromSlash(c.Path)))
		var cmd string
		switch c.Op {
		case sbpltest.OpRead:
			content, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(c.Path)))
			if err != nil || strings.TrimSpace(string(content)) == "" {
				t.Fatalf("%s: a read case needs a file with content", c)
			}
			cmd = fmt.Sprintf(`[ "$(cat %s 2>/dev/null)" = %s ]`, p, shellQuote(strings.TrimRight(string(content), "\n")))
		case sbpltest.OpWrite:
			cmd = "printf x 2>/dev/null >>" + p
		case sbpltest.OpMkdir:
			cmd = "mkdir " + p + " 2>/dev/null"
		case sbpltest.OpRm:
			cmd = "rm -d " + p + " 2>/dev/null"
		case sbpltest.OpMv:
			cmd = "mv " + p + " " + shellQuote(filepath.Join(work, filepath.FromSlash(c.Path))+".moved") + " 2>/dev/null"
		case sbpltest.OpConnect:
			cmd = "unix-dial " + p + " >/dev/null 2>&1"
		case sbpltest.OpTCP:
			cmd = fmt.Sprintf("tcp-dial 127.0.0.1:%d >/dev/null 2>&1", port)
		default:
			t.Fatalf("%s: no shell command for it", c)
		}
		fmt.Fprintf(&b, "if %s; then echo 'case %d allow'; else echo 'case %d deny'; fi\n", cmd, i, i)
	}
	return b.String()
}

// serveTCP listens on a port of the host's loopback, outside any
// session, accepting every connection until the test ends, and returns
// the port.
func serveTCP(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}
