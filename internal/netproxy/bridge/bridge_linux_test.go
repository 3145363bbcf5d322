package bridge

import (
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestEnv(t *testing.T) {
	env := Env([]string{"PATH=/bin", "http_proxy=http://corp:3128", "NO_PROXY=corp", "HOME=/h"}, 4242)
	for _, want := range []string{"PATH=/bin", "HOME=/h", "HTTP_PROXY=http://127.0.0.1:4242", "http_proxy=http://127.0.0.1:4242",
		"HTTPS_PROXY=http://127.0.0.1:4242", "https_proxy=http://127.0.0.1:4242", "ALL_PROXY=socks5h://127.0.0.1:4242",
		"all_proxy=socks5h://127.0.0.1:4242", "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %q", want, env)
		}
	}
	if slices.Contains(env, "http_proxy=http://corp:3128") || slices.Contains(env, "NO_PROXY=corp") {
		t.Errorf("the caller's proxy kept: %q", env)
	}
}

// TestBridgeOutlivesCollection: the bridge hands every connection over
// however long it runs, the garbage collector running between them. Its
// channel is a file only the bridge holds (as where the supervisor runs
// the bridge itself): collected, its descriptor would be closed under
// the bridge's loop, and the next connection dropped with a reset.
func TestBridgeOutlivesCollection(t *testing.T) {
	proxyEnd, bridgeEnd, err := NewChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer proxyEnd.Close()
	l, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The bridge's end is held by the bridge alone, as startBridge
	// leaves it.
	own, err := unix.FcntlInt(bridgeEnd.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	bridgeEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	go Bridge(l, os.NewFile(uintptr(own), "bridge"))
	for i := range 5 {
		runtime.GC()
		runtime.GC()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
		proxyEnd.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, oobn, _, _, err := unix.Recvmsg(int(proxyEnd.Fd()), buf, oob, 0)
		c.Close()
		if err != nil || oobn == 0 {
			t.Fatalf("connection %d never reached the proxy's end: %v", i, err)
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		fds, _ := unix.ParseUnixRights(&msgs[0])
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
}
