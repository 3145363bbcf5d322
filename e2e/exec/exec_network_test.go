//go:build unix

package exec

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Issue 24: the shell's network under the same policy. Every test talks
// only to servers of its own on 127.0.0.1 (and to names mapped to it in
// a private mount namespace's /etc/hosts): never any other address.

// tcpDial is the test-only client `tcp-dial ADDR`: it connects to the
// TCP address ADDR and prints "reached: ADDR", or "refused: ADDR ERR"
// and exits 1. `tcp-dial --self` listens on 127.0.0.1 and dials itself:
// the namespace's loopback is up.
func tcpDial() {
	addr := os.Args[1]
	if addr == "--self" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("refused: self", err)
			os.Exit(1)
		}
		defer l.Close()
		addr = l.Addr().String()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fmt.Println("refused: self", err)
			os.Exit(1)
		}
		c.Close()
		fmt.Println("reached: self")
		return
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("refused:", addr, err)
		os.Exit(1)
	}
	c.Close()
	fmt.Println("reached:", addr)
}

// serveHTTP runs an HTTP server on the host's 127.0.0.1, outside any
// session, answering "hello from NAME" until the test ends, and returns
// its address.
func serveHTTP(t *testing.T, name string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s (host %s)\n", name, r.Host)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// networkSession is a socket session (root or the ordinary user) with
// tcp-dial beside its dsh-fs.
func networkSession(t *testing.T, agent bool) *socketSession {
	t.Helper()
	s := newSocketSession(t, agent)
	if agent {
		if err := os.Link(s.bin, filepath.Join(filepath.Dir(s.bin), "tcp-dial")); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func forEachNetworkUser(t *testing.T, test func(t *testing.T, s *socketSession)) {
	t.Run("root", func(t *testing.T) { test(t, networkSession(t, false)) })
	t.Run("user", func(t *testing.T) { test(t, networkSession(t, true)) })
}

// reachScript tries addr (a host:port on 127.0.0.1) with a Go net.Dial,
// curl and a Python socket.connect, each printing one line: "go
// reached", "curl reached", "python reached", or that it was refused.
func reachScript(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	script := fmt.Sprintf("if tcp-dial %s >/dev/null 2>&1; then echo 'go reached'; else echo 'go refused'; fi; ", addr)
	if _, err := exec.LookPath("curl"); err == nil {
		script += fmt.Sprintf("if curl -fsS -m 5 --noproxy '*' -o /dev/null http://%s/ 2>/dev/null; then echo 'curl reached'; else echo 'curl refused'; fi; ", addr)
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		script += fmt.Sprintf(`if /usr/bin/python3 -c 'import socket; socket.create_connection(("%s", %s), 5)' 2>/dev/null; then echo 'python reached'; else echo 'python refused'; fi; `, host, port)
	}
	return script + "true"
}

// wantReach checks every client line of reachScript's output.
func wantReach(t *testing.T, out string, want bool) {
	t.Helper()
	verb := map[bool]string{true: "reached", false: "refused"}
	for _, client := range []string{"go", "curl", "python"} {
		if client == "curl" {
			if _, err := exec.LookPath("curl"); err != nil {
				continue
			}
		}
		if client == "python" {
			if _, err := os.Stat("/usr/bin/python3"); err != nil {
				continue
			}
		}
		if !strings.Contains(out, client+" "+verb[want]) {
			t.Errorf("%s: want %s:\n%s", client, verb[want], out)
		}
	}
}

// TestExecNetworkOff: under network: off, and by default in
// workspace-write and read-only, a Go net.Dial, curl and a Python
// socket.connect to the host's loopback server all fail inside the
// session, while the same commands without exec reach it; the session's
// own loopback works.
func TestExecNetworkOff(t *testing.T) {
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		addr := serveHTTP(t, "outside")
		script := reachScript(addr)
		out, err := s.command(t, nil, "sh", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("outside: %v\n%s", err, out)
		}
		wantReach(t, string(out), true)
		for _, c := range []struct {
			name, config string
			flags        []string
		}{
			{"default workspace-write", "", nil},
			{"default read-only", "", []string{"--mode", "read-only"}},
			{"network: off", "network: off\n", nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				s.config(t, c.config)
				out := s.run(t, c.flags, script+"; tcp-dial --self")
				wantReach(t, out, false)
				if !strings.Contains(out, "reached: self") {
					t.Errorf("the session's own loopback is not up:\n%s", out)
				}
			})
		}
		t.Run("policy says so", func(t *testing.T) {
			s.config(t, "")
			out := s.run(t, nil, "dsh-fs policy --verbose; dsh-fs policy --context --verbose")
			for _, want := range []string{`"network_held":true`, `"network":"off: a network namespace of its own with only loopback`,
				`{"key":"network","value":"off","origin":"pinned"`, "network (dsh-fs exec shell): off; no host is reachable"} {
				if !strings.Contains(out, want) {
					t.Errorf("policy does not say %s:\n%s", want, out)
				}
			}
		})
	})
}

// TestExecNetworkOn: under network: on, and by default in
// danger-full-access, a direct connection works.
func TestExecNetworkOn(t *testing.T) {
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		addr := serveHTTP(t, "outside")
		for _, c := range []struct {
			name, config string
			flags        []string
		}{
			{"network: on", "network: on\n", nil},
			{"default danger-full-access", "", []string{"--mode", "danger-full-access"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				s.config(t, c.config)
				wantReach(t, s.run(t, c.flags, reachScript(addr)), true)
			})
		}
	})
}

// TestExecNetworkWiden: a session source asking network: on under a
// trusted off is refused, and CMD never runs.
func TestExecNetworkWiden(t *testing.T) {
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		s.config(t, "network: off\n")
		session := filepath.Join(s.home, "session.yaml")
		harness.WriteTree(t, s.home, map[string]string{"session.yaml": "network: on\n"})
		s.ownBy(session)
		c := s.command(t, []string{"DSH_FS_CONFIG=" + session}, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c", "echo CMD-RAN")
		out, _ := c.CombinedOutput()
		if strings.Contains(string(out), "CMD-RAN") || !strings.Contains(string(out), "session cannot widen the policy") {
			t.Errorf("want the widening refused before CMD runs:\n%s", out)
		}
	})
}

// hostsFile is the /etc/hosts the allowlist tests run exec under, in a
// private mount namespace: the names the proxy resolves, all of them
// loopback but metadata.test, which names the cloud metadata address
// (never connected to: the proxy refuses it first).
const hostsFile = "127.0.0.1 localhost allowed.test denied.test sub.wild.test\n169.254.169.254 metadata.test\n"

// runWithHosts runs `dsh-fs exec --cwd WS -- sh -c SCRIPT` as the
// session's user, in a private mount namespace whose /etc/hosts is
// hostsFile, and returns its stdout and stderr.
func runWithHosts(t *testing.T, s *socketSession, script string) (string, string) {
	t.Helper()
	return runIn(t, s, hostsFile, nil, nil, script)
}

// runIn is runWithHosts with the hosts file hosts, the command line
// prefix before exec's unshare (nsenter into a network namespace), and
// extra variables in exec's own environment.
func runIn(t *testing.T, s *socketSession, hostsFile string, prefix, extraEnv []string, script string) (string, string) {
	t.Helper()
	return runInWithin(t, s, hostsFile, prefix, extraEnv, script, harness.Timeout)
}

// runInWithin is runIn with the hang guard bound, for a script that
// runs many processes in turn.
func runInWithin(t *testing.T, s *socketSession, hostsFile string, prefix, extraEnv []string, script string, bound time.Duration) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare here to give exec a private /etc/hosts")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte(hostsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	become := ""
	if s.agent {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("no setpriv here to run exec as the ordinary user")
		}
		uid := agentUser(t)
		become = fmt.Sprintf("setpriv --reuid=%d --regid=%d --clear-groups ", uid, uid)
	}
	argv := append(append([]string{}, prefix...), "unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount --bind "$1" /etc/hosts || exit 99; shift; exec `+become+`"$@"`,
		"sh", hosts, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c", script)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env = s.ws, append(append([]string{}, s.env...), extraEnv...)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	done := make(chan struct{})
	defer close(done)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		select {
		case <-done:
		case <-time.After(bound):
			c.Process.Kill()
		}
	}()
	c.Wait()
	return stdout.String(), stderr.String()
}

// serveTLS runs an HTTPS server on the host's 127.0.0.1 until the test
// ends and returns its port.
func serveTLS(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over tls (host %s)\n", r.Host)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// TestExecNetworkAllowlist: under network: allowlist, an allowed name is
// reachable through the session's proxy over plain HTTP, CONNECT and
// SOCKS5; a refused name gets a 403 naming it and network_allow, and a
// line in exec's log; a direct connection that bypasses the proxy fails;
// 169.254.169.254 and 127.0.0.1 are refused unless an entry names them,
// by address or through a name that resolves to them.
func TestExecNetworkAllowlist(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
		tls := serveTLS(t)
		t.Run("allowed", func(t *testing.T) {
			s.config(t, fmt.Sprintf("network: allowlist\nnetwork_allow: [allowed.test, \"*.wild.test\", metadata.test, \"127.0.0.1:%s\", \"127.0.0.1:%s\"]\n", port, tls))
			script := fmt.Sprintf(`echo "env: $HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY"
curl -sS -m 10 http://allowed.test:%[1]s/; echo "plain=$?"
curl -sS -m 10 -k https://allowed.test:%[2]s/; echo "connect=$?"
curl -sS -m 10 -x "$ALL_PROXY" http://sub.wild.test:%[1]s/; echo "socks=$?"
curl -sS -m 10 -w 'status=%%{http_code}\n' http://denied.test:%[1]s/; echo "denied=$?"
curl -sS -m 10 -x "$ALL_PROXY" http://denied.test:%[1]s/ 2>/dev/null; echo "socks-denied=$?"
curl -sS -m 10 http://wild.test:%[1]s/; echo "wild-apex=$?"
curl -sS -m 10 http://metadata.test/; echo "metadata-name=$?"
curl -sS -m 10 http://169.254.169.254/latest/meta-data/; echo "metadata=$?"
curl -fsS -m 5 --noproxy '*' http://allowed.test:%[1]s/ 2>/dev/null; echo "direct=$?"
dsh-fs policy --context --verbose | grep '^network'
`, port, tls)
			out, errs := runWithHosts(t, s, script)
			for _, want := range []string{
				"env: http://127.0.0.1:", "socks5h://127.0.0.1:", "localhost,127.0.0.1",
				"hello from outside (host allowed.test:" + port + ")\nplain=0",
				"hello over tls (host allowed.test:" + tls + ")\nconnect=0",
				"hello from outside (host sub.wild.test:" + port + ")\nsocks=0",
				"refuses denied.test:" + port + ": not in network_allow",
				"the trusted setting network_allow names the hosts a session may reach\nstatus=403",
				"refuses wild.test:" + port + ": not in network_allow",
				"refuses metadata.test:80: it resolves to 169.254.169.254",
				"refuses 169.254.169.254:80: not in network_allow",
				"network (dsh-fs exec shell): only through the session's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) to allowed.test, *.wild.test, metadata.test, 127.0.0.1:" + port,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the session did not print %q:\n%s\nstderr: %s", want, out, errs)
				}
			}
			for _, bad := range []string{"socks-denied=0", "direct=0"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s:\n%s", bad, out)
				}
			}
			if !strings.Contains(errs, `"network_refused":{"host":"denied.test","port":`+port) {
				t.Errorf("no line for denied.test in exec's log:\n%s", errs)
			}
		})
		t.Run("loopback only when named", func(t *testing.T) {
			s.config(t, "network: allowlist\nnetwork_allow: [allowed.test]\n")
			out, _ := runWithHosts(t, s, fmt.Sprintf("curl -sS -m 10 http://allowed.test:%[1]s/; echo; env -u NO_PROXY -u no_proxy curl -sS -m 10 http://127.0.0.1:%[1]s/; true", port))
			for _, want := range []string{
				"refuses allowed.test:" + port + ": it resolves to 127.0.0.1, a loopback, private or link-local address that no network_allow entry names",
				"refuses 127.0.0.1:" + port + ": not in network_allow",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the session did not print %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "hello from") {
				t.Errorf("loopback reached:\n%s", out)
			}
		})
	})
}

// inetSockets lists the TCP, UDP and raw sockets process pid holds: the
// socket inodes among its descriptors that its network namespace's
// tables name.
func inetSockets(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var found []string
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6", "raw", "raw6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if f := strings.Fields(line); len(f) > 9 && inodes[f[9]] {
				found = append(found, table+": "+line)
			}
		}
	}
	return found
}

// descendants is pid and every process beneath it.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var p, pp int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(data), ')'); i > 0 {
			if f := strings.Fields(string(data[i+1:])); len(f) > 1 {
				fmt.Sscan(f[1], &pp)
				children[pp] = append(children[pp], p)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// TestMcpNoNetwork: dsh-fs mcp makes no network connection of its own:
// after a session of calls (reads, a search, a write, an edit, the
// policy) neither it nor any process it started holds a TCP, UDP or raw
// socket.
func TestMcpNoNetwork(t *testing.T) {
	// The control: a socket this test holds is found.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if found := inetSockets(t, os.Getpid()); len(found) == 0 {
		t.Fatal("inetSockets does not find this test's own listener")
	}
	l.Close()
	ws, _ := harness.MCPLayout(t)
	c := exec.Command(harness.Bin(t), "mcp", ws)
	c.Env, c.Dir, c.Stderr = harness.MCPEnv(t, ws), ws, os.Stderr
	s := harness.MCPConnect(t, c, nil)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": "a.txt"}},
		{"list_directory", map[string]any{"path": ws}},
		{"search_files", map[string]any{"path": ws, "pattern": "*.go"}},
		{"get_file_info", map[string]any{"path": "a.txt"}},
		{"write_file", map[string]any{"path": "net.txt", "content": "x\n"}},
		{"edit_file", map[string]any{"path": "net.txt", "edits": []map[string]any{{"oldText": "x", "newText": "y"}}}},
		{"dsh_policy", map[string]any{}},
	} {
		if res := harness.MCPCall(t, s, call.tool, call.args); res.IsError {
			t.Fatalf("%s: %s", call.tool, harness.MCPText(res))
		}
	}
	pids := descendants(c.Process.Pid)
	for _, pid := range pids {
		if found := inetSockets(t, pid); len(found) > 0 {
			t.Errorf("process %d of dsh-fs mcp holds network sockets:\n%s", pid, strings.Join(found, "\n"))
		}
	}
	t.Logf("checked %d processes", len(pids))
}

// TestExecNetworkNoNamespaceRefused: where no network namespace can be
// made (an ordinary user without the mount layer: here
// danger-full-access, which has none), network: off and allowlist are
// refused before CMD runs, naming what is missing: the old fallback,
// Landlock's TCP rules, let the proxy's port through to every address
// (a server of the session's own on 127.0.0.2, on the proxy's port
// number, was reached directly) and let io_uring's socket operation by.
// As root a namespace is always made: the same settings hold there, and
// the direct connection is refused.
func TestExecNetworkNoNamespaceRefused(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3 here: it is the server on 127.0.0.2 of this test")
	}
	// A server on 127.0.0.2 at the proxy's port, then a Go dial to it.
	script := `port=${HTTP_PROXY##*:}; port=${port%/}
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.2", int(sys.argv[1]))); s.listen(); time.sleep(20)' "$port" &
sleep 1; tcp-dial 127.0.0.2:$port; kill $! 2>/dev/null; echo CMD-RAN`
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		for _, network := range []string{"allowlist", "off"} {
			s.config(t, "mode: danger-full-access\nnetwork: "+network+"\nnetwork_allow: [\"127.0.0.1:1\"]\n")
			out := s.run(t, nil, script)
			if strings.Contains(out, "reached: 127.0.0.2") {
				t.Errorf("network: %s: the shell connected past the proxy to 127.0.0.2:\n%s", network, out)
			}
			if !s.agent {
				if !strings.Contains(out, "CMD-RAN") {
					t.Errorf("network: %s: as root the session did not run:\n%s", network, out)
				}
				continue
			}
			if strings.Contains(out, "CMD-RAN") || !strings.Contains(out, `"code":"FS_CONFIG_INVALID"`) || !strings.Contains(out, "no network namespace") {
				t.Errorf("network: %s: want exec refused before CMD runs, naming the missing namespace:\n%s", network, out)
			}
		}
		// On needs no namespace: it runs.
		s.config(t, "mode: danger-full-access\nnetwork: on\n")
		if out := s.run(t, nil, "echo CMD-RAN"); !strings.Contains(out, "CMD-RAN") {
			t.Errorf("network: on did not run:\n%s", out)
		}
	})
}

// landlockABIForTest is the kernel's Landlock ABI.
func landlockABIForTest(t *testing.T) int {
	t.Helper()
	return sandbox.ActiveLayers(policy.Policy{}).LandlockABI
}

// TestExecNetworkApproveOnce: under network_approval: command, a host no entry
// allows is put to the approver once, with the host shown; approved, the
// session reaches it for the rest of its life without asking again;
// refused, it stays refused, the 403 saying why, and is not asked about
// again. An internal address is never asked about: no approval opens it.
func TestExecNetworkApproveOnce(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
		script := fmt.Sprintf(`curl -sS -m 20 http://denied.test:%[1]s/; echo "first=$?"
curl -sS -m 20 http://denied.test:%[1]s/; echo "second=$?"
curl -sS -m 20 http://169.254.169.254/; echo "metadata=$?"
`, port)
		for _, c := range []struct {
			name   string
			status int
			want   []string
		}{
			{"approved", 0, []string{"hello from outside (host denied.test:" + port + ")\nfirst=0", "hello from outside (host denied.test:" + port + ")\nsecond=0"}},
			{"refused", 1, []string{"refuses denied.test:" + port + ": not in network_allow (not approved: approval_command exited with status 1)"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				record := filepath.Join(s.home, "asked-"+c.name)
				s.config(t, fmt.Sprintf("network: allowlist\nnetwork_allow: [\"127.0.0.1:%s\"]\napproval: command\nnetwork_approval: command\napproval_command: [/bin/sh, -c, \"cat >> %s; exit %d\"]\n", port, record, c.status))
				out, errs := runWithHosts(t, s, script)
				for _, want := range c.want {
					if !strings.Contains(out, want) {
						t.Errorf("the session did not print %q:\n%s\nstderr: %s", want, out, errs)
					}
				}
				if !strings.Contains(out, "refuses 169.254.169.254:80: not in network_allow;") {
					t.Errorf("the metadata address was not refused as it is:\n%s", out)
				}
				asked, _ := os.ReadFile(record)
				lines := strings.Split(strings.TrimSpace(string(asked)), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], `"op":"network","path":"denied.test:`+port+`"`) {
					t.Errorf("the approver was asked %d times, want once about denied.test:%s:\n%s", len(lines), port, asked)
				}
			})
		}
	})
}

// TestExecNetworkApproveAtTerminal: under network_approval:
// supervisor, the person at exec's terminal is asked about a host no
// entry allows, the host named in the question; yes opens it for the
// session, no keeps the 403, saying so.
func TestExecNetworkApproveAtTerminal(t *testing.T) {
	harness.RequireLandlock(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here: it is the proxy's client in this test")
	}
	_, port, _ := net.SplitHostPort(serveHTTP(t, "outside"))
	for _, c := range []struct{ answer, want string }{
		{"y\n", "hello from outside (host localhost:" + port + ")"},
		{"n\n", "refuses localhost:" + port + ": not in network_allow (not approved: not approved at the supervisor's terminal)"},
	} {
		t.Run(strings.TrimSpace(c.answer), func(t *testing.T) {
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			env := execEnv(t, ws)
			// localhost is a name no entry allows; 127.0.0.1:PORT lets it
			// connect once approved, its address being loopback.
			harness.WriteSystemConfig(t, env, "network: allowlist\nnetwork_approval: supervisor\nnetwork_allow: [\"127.0.0.1:"+port+"\"]\n")
			r := runUnderTTY(t, env, ws, c.answer, "exec", "--cwd", ws, "--", "sh", "-c",
				"env -u NO_PROXY -u no_proxy curl -sS -m 20 http://localhost:"+port+"/ 2>&1")
			if !r.prompted || !strings.Contains(r.screen, "asked to connect to the network host localhost:"+port) || !strings.Contains(r.screen, "for the rest of this session?") {
				t.Fatalf("no question naming the host at exec's terminal; it shows %q; output %s", r.screen, r.stdout)
			}
			if !strings.Contains(r.stdout+r.screen, c.want) {
				t.Errorf("want %q; output %s; terminal %q", c.want, r.stdout, r.screen)
			}
		})
	}
}
