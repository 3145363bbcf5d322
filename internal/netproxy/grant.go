package netproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// FileID is a file's identity as the kernel knows it: its device and
// inode. A copy of a program, wherever it is and whatever its name, has
// another; a process's argv[0] is not looked at.
type FileID struct{ Dev, Ino uint64 }

// Grant is network_allow_commands' grant of hosts to one program
// (docs/design.md §10, network for one command): a connection is
// granted when every process holding it runs that program, or runs
// beneath a process that does, in the session.
type Grant struct {
	// Command is the program's path, as resolved on the trusted side.
	Command string
	ID      FileID
	Allow   policy.NetworkAllow
}

// NewGrant is the grant of the hosts allow to the program at path, a
// compiled one: a script (#!) runs as its interpreter, whose identity
// every other script of that interpreter shares, so it is refused.
func NewGrant(path string, allow []string) (Grant, error) {
	a, err := policy.ParseNetworkAllow(allow)
	if err != nil {
		return Grant{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Grant{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Grant{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Grant{}, fmt.Errorf("%s is not a regular file", path)
	}
	head := make([]byte, 2)
	if n, _ := io.ReadFull(f, head); n == 2 && string(head) == "#!" {
		return Grant{}, fmt.Errorf("%s is a script: the kernel knows its processes by their interpreter, which every script of it shares; name a compiled program", path)
	}
	return Grant{Command: path, ID: FileID{Dev: st.Dev, Ino: st.Ino}, Allow: a}, nil
}

// SetGrants gives the proxy the grants, and peer, which returns, for
// each process holding a client's connection, the identities of its
// program and of every ancestor's up to the session's first process.
func (p *Proxy) SetGrants(grants []Grant, peer func(net.Conn) ([][]FileID, error)) {
	p.grants, p.peer = grants, peer
}

// granted is the grant that covers host:port for client, or nil: one
// that allows the host and whose program every holder of the connection
// runs, or runs beneath. The holders are looked up now, as the decision
// is taken; a holder that cannot be told (gone, unreadable) covers
// nothing.
func (p *Proxy) granted(client net.Conn, host string, port int) *Grant {
	if client == nil || len(p.grants) == 0 || p.peer == nil {
		return nil
	}
	var cands []*Grant
	for i := range p.grants {
		if p.grants[i].Allow.AllowsName(host, port) {
			cands = append(cands, &p.grants[i])
		}
	}
	if len(cands) == 0 {
		return nil
	}
	chains, err := p.peer(client)
	if err != nil || len(chains) == 0 {
		return nil
	}
next:
	for _, g := range cands {
		for _, chain := range chains {
			found := false
			for _, id := range chain {
				found = found || id == g.ID
			}
			if !found {
				continue next
			}
		}
		return g
	}
	return nil
}

// grantPoll is how often a connection a grant opened is checked again.
const grantPoll = 500 * time.Millisecond

// watchGrant ends up and client once no grant covers client any more
// (the program has ended, or handed the connection on): the grant ends
// with its program, for connections already open too. It returns up,
// whose Close ends the watch.
func (p *Proxy) watchGrant(client, up net.Conn, host string, port int) net.Conn {
	w := &watchedConn{Conn: up, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(grantPoll)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			if p.granted(client, host, port) == nil {
				up.Close()
				client.Close()
				return
			}
		}
	}()
	return w
}

// watchedConn is a connection watchGrant watches until it closes.
type watchedConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (w *watchedConn) Close() error {
	w.once.Do(func() { close(w.done) })
	return w.Conn.Close()
}

func (w *watchedConn) CloseWrite() error {
	if cw, ok := w.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SessionPeer is the peer of SetGrants for a session whose first process
// is init (its pid as the proxy sees it) and whose bridge hands over
// connections made to its loopback: the client's socket is found in the
// session's network namespace's table (/proc/NETPID/net/tcp, of a
// process netPid in that namespace the proxy may read: init itself, or
// its parent where init is not readable) by its two ends, its holders among init's
// descendants by their descriptors, and each holder's programs by
// /proc/PID/exe's identity, up to init.
func SessionPeer(netPid, init int) func(net.Conn) ([][]FileID, error) {
	return func(c net.Conn) ([][]FileID, error) {
		client, err1 := netip.ParseAddrPort(c.RemoteAddr().String())
		bridge, err2 := netip.ParseAddrPort(c.LocalAddr().String())
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("the connection's ends are not TCP addresses")
		}
		inode, err := socketInode(netPid, client, bridge)
		if err != nil {
			return nil, err
		}
		parent := parents()
		var chains [][]FileID
		for _, pid := range descendantsOf(init, parent) {
			if held, err := holds(pid, inode); err != nil {
				return nil, err
			} else if !held {
				continue
			}
			var chain []FileID
			for p := pid; p != init && p > 1; p = parent[p] {
				var st unix.Stat_t
				if err := unix.Stat("/proc/"+strconv.Itoa(p)+"/exe", &st); err != nil {
					return nil, err
				}
				chain = append(chain, FileID{Dev: st.Dev, Ino: st.Ino})
			}
			chains = append(chains, chain)
		}
		return chains, nil
	}
}

// socketInode is the inode of the TCP socket whose local end is client
// and remote end bridge, in the network namespace of process pid.
func socketInode(pid int, client, bridge netip.AddrPort) (string, error) {
	if !client.Addr().Is4() || !bridge.Addr().Is4() {
		return "", fmt.Errorf("the bridge serves IPv4 only")
	}
	hex := func(ap netip.AddrPort) string {
		b := ap.Addr().As4()
		return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(b[:]), ap.Port())
	}
	local, remote := hex(client), hex(bridge)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/tcp")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 9 && f[1] == local && f[2] == remote {
			return f[9], nil
		}
	}
	return "", fmt.Errorf("no socket of the session from %s", client)
}

// parents maps each process to its parent.
func parents() map[int]int {
	out := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The name (field 2) may hold spaces and parentheses: the
		// fields after its last ')' are the kernel's.
		if i := strings.LastIndexByte(string(data), ')'); i > 0 {
			if f := strings.Fields(string(data[i+1:])); len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					out[pid] = pp
				}
			}
		}
	}
	return out
}

// descendantsOf is every process beneath init.
func descendantsOf(init int, parent map[int]int) []int {
	children := map[int][]int{}
	for pid, pp := range parent {
		children[pp] = append(children[pp], pid)
	}
	var out []int
	queue := children[init]
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		out = append(out, pid)
	}
	return out
}

// holds reports whether process pid has a descriptor of socket inode;
// a process gone meanwhile holds nothing, one that cannot be read is an
// error: it might.
func holds(pid int, inode string) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if l, err := os.Readlink(dir + fd.Name()); err == nil && l == want {
			return true, nil
		}
	}
	return false, nil
}
