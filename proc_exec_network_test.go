package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		script += fmt.Sprintf("if curl -sS -m 5 --noproxy '*' -o /dev/null http://%s/ 2>/dev/null; then echo 'curl reached'; else echo 'curl refused'; fi; ", addr)
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
			out := s.run(t, nil, "dsh-fs policy; dsh-fs policy --context")
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
		writeTree(t, s.home, map[string]string{"session.yaml": "network: on\n"})
		s.ownBy(session)
		c := s.command(t, []string{"DSH_FS_CONFIG=" + session}, s.bin, "exec", "--cwd", s.ws, "--", "sh", "-c", "echo CMD-RAN")
		out, _ := c.CombinedOutput()
		if strings.Contains(string(out), "CMD-RAN") || !strings.Contains(string(out), "session cannot widen the policy") {
			t.Errorf("want the widening refused before CMD runs:\n%s", out)
		}
	})
}
