package netproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

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
