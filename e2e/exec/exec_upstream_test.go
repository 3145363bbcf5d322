//go:build unix

package exec

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// Issue 44: the session's proxy behind an upstream proxy, and hosts
// granted to one program. The test's "internet" is 203.0.113.7
// (TEST-NET-3, documentation only) on the loopback of a network
// namespace of its own (U), where the test's upstream proxy listens on
// a veth end, 10.200.0.1; exec runs in another (X), whose only link is
// that veth: from X the internet has no route, the upstream alone
// reaches it. Nothing here ever leaves the two namespaces.

const (
	internetAddr = "203.0.113.7"
	upstreamAddr = "10.200.0.1"
	// upstreamSecret is the upstream's password, in exec's own
	// HTTPS_PROXY only.
	upstreamSecret = "s3cret-upstream-PW"
)

// chainHosts is exec's /etc/hosts: every name is the internet's.
const chainHosts = "127.0.0.1 localhost\n" + internetAddr + " pkg.test refused.test direct.test granted.test\n"

var netnsSeq atomic.Int32

// netnsPair makes the namespaces X (exec's) and U (the upstream's and
// the internet's), joined by a veth, and returns their paths.
func netnsPair(t *testing.T) (x, u string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	for _, tool := range []string{"ip", "nsenter", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here", tool)
		}
	}
	n := fmt.Sprintf("%d%d", os.Getpid()%100000, netnsSeq.Add(1))
	xn, un := "dshx"+n, "dshu"+n
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", xn)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", xn).Run() })
	run("netns", "add", un)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", un).Run() })
	run("-n", xn, "link", "add", "vx"+n, "type", "veth", "peer", "name", "vu"+n, "netns", un)
	run("-n", xn, "link", "set", "lo", "up")
	run("-n", xn, "addr", "add", "10.200.0.2/30", "dev", "vx"+n)
	run("-n", xn, "link", "set", "vx"+n, "up")
	run("-n", un, "link", "set", "lo", "up")
	run("-n", un, "addr", "add", upstreamAddr+"/30", "dev", "vu"+n)
	run("-n", un, "link", "set", "vu"+n, "up")
	run("-n", un, "addr", "add", internetAddr+"/32", "dev", "lo")
	return "/run/netns/" + xn, "/run/netns/" + un
}

// listenIn listens on addr (host:0) in the network namespace ns.
func listenIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	var l net.Listener
	var err error
	inNetns(t, ns, func() { l, err = net.Listen("tcp", addr) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// upstream is the test's upstream proxy: CONNECT only, asking for
// Basic credentials alice:upstreamSecret, dialling from U. log holds
// each CONNECT's target.
type upstream struct {
	ns  string
	l   net.Listener
	mu  sync.Mutex
	log []string
}

func (u *upstream) targets() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.log, "\n")
}

func (u *upstream) serve(t *testing.T) {
	for {
		c, err := u.l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			u.mu.Lock()
			u.log = append(u.log, req.Method+" "+req.RequestURI)
			u.mu.Unlock()
			auth := req.Header.Get("Proxy-Authorization")
			if req.Method != http.MethodConnect || auth != "Basic "+basic("alice:"+upstreamSecret) {
				fmt.Fprintf(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
				return
			}
			var up net.Conn
			inNetns(t, u.ns, func() { up, err = net.DialTimeout("tcp", req.RequestURI, 5*time.Second) })
			if err != nil {
				// The body echoes what it was sent: the session's proxy
				// must not pass it on.
				body := "upstream cannot reach " + req.RequestURI + " (auth " + auth + ")"
				fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				return
			}
			defer up.Close()
			io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
			go io.Copy(up, br)
			io.Copy(c, up)
		}()
	}
}

func basic(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// chain readies X and U: the upstream, and the internet's servers:
// plain HTTP on one port, another port only refused requests name, and
// TLS on a third.
type chain struct {
	x, u               string
	up                 *upstream
	plain, other, tlsP string
}

func newChain(t *testing.T) *chain {
	x, u := netnsPair(t)
	c := &chain{x: x, u: u, up: &upstream{ns: u}}
	c.up.l = listenIn(t, u, upstreamAddr+":0")
	go c.up.serve(t)
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the internet (host %s)\n", r.Host)
	})
	for _, p := range []*string{&c.plain, &c.other} {
		l := listenIn(t, u, internetAddr+":0")
		srv := &http.Server{Handler: hello}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		_, *p, _ = net.SplitHostPort(l.Addr().String())
	}
	ts := httptest.NewUnstartedServer(hello)
	ts.Listener = listenIn(t, u, internetAddr+":0")
	ts.StartTLS()
	t.Cleanup(ts.Close)
	_, c.tlsP, _ = net.SplitHostPort(ts.Listener.Addr().String())
	return c
}

// env is exec's own environment's proxy variables: the upstream, with
// its credentials, and direct.test left direct.
func (c *chain) env() []string {
	url := "http://alice:" + upstreamSecret + "@" + c.up.l.Addr().String()
	return []string{"HTTPS_PROXY=" + url, "http_proxy=" + url, "NO_PROXY=direct.test"}
}

func (c *chain) run(t *testing.T, s *socketSession, script string) (string, string) {
	t.Helper()
	return c.runWithin(t, s, script, harness.Timeout)
}

// runWithin is run with the hang guard bound (runInWithin).
func (c *chain) runWithin(t *testing.T, s *socketSession, script string, bound time.Duration) (string, string) {
	t.Helper()
	return runInWithin(t, s, chainHosts, []string{"nsenter", "--net=" + c.x}, c.env(), script, bound)
}

// leakScript prints everything of the session's processes a sibling of
// the same user reads: the environment, every process's environ and
// command line.
const leakScript = `env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; done 2>/dev/null; echo leak-check-done`

// TestExecNetworkUpstream: behind an upstream proxy (exec's own
// HTTPS_PROXY, with credentials), an allowed host is reached through
// it over plain HTTP, CONNECT and SOCKS5, the upstream asked to
// CONNECT to the address the session's proxy checked; a refused host
// never reaches the upstream; a NO_PROXY host is dialled directly
// (here: no route); and the upstream's credentials show nowhere in the
// session: its environment, any process's environ or command line, the
// proxy's replies (the upstream's own error body, which echoes them,
// included). Before, the proxy dialled the internet directly (no route:
// every allowed host failed with a 502) and the session's first
// process kept exec's HTTPS_PROXY in its environ, readable at
// /proc/1/environ.
func TestExecNetworkUpstream(t *testing.T) {
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		c := newChain(t)
		s.config(t, "network: allowlist\nnetwork_allow: [pkg.test, direct.test]\n")
		script := fmt.Sprintf(`curl -sS -m 10 http://pkg.test:%[1]s/; echo "plain=$?"
curl -sS -m 10 -k https://pkg.test:%[3]s/; echo "connect=$?"
curl -sS -m 10 -x "$ALL_PROXY" http://pkg.test:%[1]s/; echo "socks=$?"
curl -sS -m 10 http://refused.test:%[2]s/; echo "refused=$?"
curl -sS -m 10 http://pkg.test:1/; echo "upstream-refuses=$?"
curl -sS -m 10 http://direct.test:%[2]s/; echo "direct=$?"
`, c.plain, c.other, c.tlsP) + leakScript
		out, errs := c.run(t, s, script)
		for _, want := range []string{
			"hello from the internet (host pkg.test:" + c.plain + ")\nplain=0",
			"hello from the internet (host pkg.test:" + c.tlsP + ")\nconnect=0",
			"hello from the internet (host pkg.test:" + c.plain + ")\nsocks=0",
			"refuses refused.test:" + c.other + ": not in network_allow",
			"the upstream proxy " + c.up.l.Addr().String() + " answered 502 to CONNECT " + internetAddr + ":1",
			"leak-check-done",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the session did not print %q:\n%s\nstderr: %s", want, out, errs)
			}
		}
		// direct.test is NO_PROXY: dialled from X, which has no route.
		if want := "dial tcp " + internetAddr + ":" + c.other + ": connect: network is unreachable"; !strings.Contains(out, want) {
			t.Errorf("direct.test was not dialled directly (%q):\n%s", want, out)
		}
		for _, secret := range []string{upstreamSecret, basic("alice:" + upstreamSecret)} {
			if strings.Contains(out, secret) || strings.Contains(errs, secret) {
				t.Errorf("the upstream's credentials are visible (%q):\n%s\nstderr: %s", secret, out, errs)
			}
		}
		log := c.up.targets()
		for _, want := range []string{"CONNECT " + internetAddr + ":" + c.plain, "CONNECT " + internetAddr + ":" + c.tlsP} {
			if !strings.Contains(log, want) {
				t.Errorf("the upstream was not asked %q; it was asked:\n%s", want, log)
			}
		}
		if strings.Contains(log, ":"+c.other) || strings.Contains(log, ".test") {
			t.Errorf("the upstream was asked about a refused or NO_PROXY host, or by name:\n%s", log)
		}
		t.Run("trusted setting and credentials file", func(t *testing.T) {
			dir := t.TempDir()
			for d := dir; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			cred := filepath.Join(dir, "upstream.cred")
			if err := os.WriteFile(cred, []byte("alice:"+upstreamSecret+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			trusted := fmt.Sprintf("network: allowlist\nnetwork_allow: [pkg.test]\nnetwork_upstream_proxy: http://%s\nnetwork_upstream_proxy_auth_file: %s\n", c.up.l.Addr(), cred)
			script := fmt.Sprintf("curl -sS -m 10 http://pkg.test:%s/; echo \"plain=$?\"; cat %s; ", c.plain, cred) + leakScript
			// Without a deny_read entry for it, the session could read
			// the file: exec refuses to start.
			s.config(t, trusted)
			out, errs := runIn(t, s, chainHosts, []string{"nsenter", "--net=" + c.x}, nil, script)
			if strings.Contains(out, "plain=") || !strings.Contains(out+errs, "the session could read it") || strings.Contains(out+errs, upstreamSecret) {
				t.Errorf("want exec refused, naming deny_read, without the secret:\n%s\nstderr: %s", out, errs)
			}
			s.config(t, trusted+"deny_read: [\""+cred+"\"]\n")
			out, errs = runIn(t, s, chainHosts, []string{"nsenter", "--net=" + c.x}, nil, script)
			if !strings.Contains(out, "hello from the internet (host pkg.test:"+c.plain+")\nplain=0") || !strings.Contains(out, "leak-check-done") {
				t.Errorf("the allowed host was not reached through the trusted upstream:\n%s\nstderr: %s", out, errs)
			}
			if strings.Contains(out+errs, upstreamSecret) || strings.Contains(out+errs, basic("alice:"+upstreamSecret)) {
				t.Errorf("the upstream's credentials are visible:\n%s\nstderr: %s", out, errs)
			}
		})
	})
}

// TestExecNetworkCommandGrant: network_allow_commands grants
// granted.test to one program, fake-npm (a copy of this test binary,
// standing in for npm, in a folder the session cannot write): it and
// what it runs reach the host while it runs; a sibling command of the
// same session does not; nor does a copy of fake-npm under the same
// name in the workspace, or curl run with fake-npm as its argv[0] (the
// grant follows the file, not the name); nor
// does a process fake-npm left running after it ended, nor a tunnel
// fake-npm opened and left to such a process (the grant ends with it).
func TestExecNetworkCommandGrant(t *testing.T) {
	forEachNetworkUser(t, func(t *testing.T, s *socketSession) {
		c := newChain(t)
		dir := t.TempDir()
		for d := dir; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		npm := filepath.Join(dir, "bin", "fake-npm")
		harness.CopyExecutable(t, s.bin, npm)
		// tmp: false keeps the folder of fake-npm out of the session's
		// writable roots.
		s.config(t, "tmp: false\nnetwork: allowlist\nnetwork_allow: [pkg.test]\nnetwork_allow_commands: [\""+npm+"=granted.test\"]\n")
		url := "http://granted.test:" + c.plain + "/"
		// The shells fake-npm leaves behind say when they are done
		// (orphan.done, held.done): the session waits for that, not a
		// time a loaded machine may overrun.
		script := fmt.Sprintf(`waitfor() { i=0; until [ -e "$1" ]; do i=$((i+1)); [ $i -gt 300 ] && { echo "no $1"; return 1; }; sleep 0.1; done; }
%[1]s %[2]s; echo "npm=$?"
%[1]s --child %[2]s; echo "npm-child=$?"
curl -sS -m 10 -o /dev/null -w 'sibling=%%{http_code}\n' %[2]s
mkdir -p bin && cp %[1]s bin/fake-npm && ./bin/fake-npm %[2]s; echo "copy=$?"
if [ -x /usr/bin/python3 ]; then /usr/bin/python3 -c 'import os, sys; os.execv("/usr/bin/curl", ["fake-npm", "-sS", "-m", "10", "-o", "/dev/null", "-w", "argv0=%%{http_code}\n", sys.argv[1]])' %[2]s; else echo argv0=no-python; fi
%[1]s --orphan %[2]s; echo "npm-orphan-started=$?"; waitfor orphan.done
%[1]s --hold granted.test:%[3]s; waitfor held.done
dsh-fs policy --verbose | grep -o 'network_allow_commands grants [^;]*'
`, npm, url, c.plain)
		// Some ten processes in turn, four of them race-built, and the
		// waits for the shells left behind (each bounded at 30 s in
		// the script): 13 to 15 s with the old fixed sleeps, loaded.
		out, errs := c.runWithin(t, s, script, 4*harness.Timeout)
		for _, want := range []string{
			"fake-npm got: hello from the internet (host granted.test:" + c.plain + ")\nnpm=0",
			"hello from the internet (host granted.test:" + c.plain + ")\nfake-npm child done\nnpm-child=0",
			"sibling=403",
			"fake-npm refused: 403 dsh-fs: the session's network refuses granted.test:" + c.plain + ": not in network_allow",
			"orphan=403",
			"fake-npm tunnel open",
			"held-done",
			"network_allow_commands grants " + npm + "=granted.test to that program's processes while it runs",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the session did not print %q:\n%s\nstderr: %s", want, out, errs)
			}
		}
		if _, err := os.Stat("/usr/bin/python3"); err == nil && !strings.Contains(out, "argv0=403") {
			t.Errorf("curl run as argv[0] fake-npm was not refused:\n%s", out)
		}
		if strings.Contains(out, "host held.test") {
			t.Errorf("a tunnel fake-npm opened served the shell it left behind after it ended:\n%s", out)
		}
		for _, bad := range []string{"copy=0"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the grant reached beyond fake-npm's own processes:\n%s", bad, out)
			}
		}
		if !strings.Contains(errs, `"network_refused":{"host":"granted.test"`) {
			t.Errorf("no refusal line for the sibling in exec's log:\n%s", errs)
		}
	})
}

// fakeNpm is the test-only program `fake-npm [--child|--orphan] URL`,
// standing in for npm: it fetches URL through the session's proxy
// (HTTP_PROXY) and prints "fake-npm got: BODY", or "fake-npm refused:
// STATUS BODY" and exits 1. --child has curl fetch it, as a child it
// waits for; --orphan leaves a shell behind that fetches it once
// fake-npm has ended, printing "orphan=HTTP-STATUS", and then makes
// orphan.done in its folder.
func fakeNpm() {
	switch os.Args[1] {
	case "--child":
		c := exec.Command("curl", "-sS", "-m", "10", os.Args[2])
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		err := c.Run()
		fmt.Println("fake-npm child done")
		if err != nil {
			os.Exit(1)
		}
		return
	case "--hold":
		holdTunnel(os.Args[2])
		return
	case "--orphan":
		// Once fake-npm has ended (its pid gone: the session's shell
		// reaps it at once), not after a guess of how long that takes.
		// The pid is passed: the shell's $PPID is its reaper's when
		// fake-npm has already gone by the time it starts.
		c := exec.Command("sh", "-c", `while kill -0 "$2" 2>/dev/null; do sleep 0.1; done
curl -sS -m 10 -o /dev/null -w 'orphan=%{http_code}\n' "$1"; : >orphan.done`, "sh", os.Args[2], strconv.Itoa(os.Getpid()))
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			fmt.Println("fake-npm:", err)
			os.Exit(1)
		}
		return
	}
	resp, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Println("fake-npm refused:", err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Printf("fake-npm refused: %d %s\n", resp.StatusCode, b)
		os.Exit(1)
	}
	fmt.Printf("fake-npm got: %s", b)
}

// holdTunnel opens a CONNECT tunnel to hostPort through the session's
// proxy, hands it to a shell left behind as its descriptor 3, and
// returns: once fake-npm has ended, the shell reads the tunnel until the
// proxy closes it (its grant's watch, every grantPoll), then sends a
// request through it and prints what came back, then "held-done", and
// makes held.done. A tunnel that stays open holds the shell in its first
// read, and "held-done" never comes.
func holdTunnel(hostPort string) {
	proxy := strings.TrimPrefix(os.Getenv("HTTP_PROXY"), "http://")
	c, err := net.Dial("tcp", strings.TrimSuffix(proxy, "/"))
	if err != nil {
		fmt.Println("fake-npm:", err)
		os.Exit(1)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK || br.Buffered() > 0 {
		fmt.Println("fake-npm: no tunnel:", resp, err)
		os.Exit(1)
	}
	fmt.Println("fake-npm tunnel open")
	f, _ := c.(*net.TCPConn).File()
	sh := exec.Command("sh", "-c", `while kill -0 "$1" 2>/dev/null; do sleep 0.1; done; cat <&3
(printf 'GET / HTTP/1.0\r\nHost: held.test\r\n\r\n' >&3) 2>/dev/null; cat <&3; echo held-done; : >held.done`, "sh", strconv.Itoa(os.Getpid()))
	sh.Stdout, sh.Stderr, sh.ExtraFiles = os.Stdout, os.Stderr, []*os.File{f}
	if err := sh.Start(); err != nil {
		fmt.Println("fake-npm:", err)
		os.Exit(1)
	}
}
