package netproxy

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

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
	id, regular, err := fileID(f)
	if err != nil {
		return Grant{}, err
	}
	if !regular {
		return Grant{}, fmt.Errorf("%s is not a regular file", path)
	}
	head := make([]byte, 2)
	if n, _ := io.ReadFull(f, head); n == 2 && string(head) == "#!" {
		return Grant{}, fmt.Errorf("%s is a script: the kernel knows its processes by their interpreter, which every script of it shares; name a compiled program", path)
	}
	return Grant{Command: path, ID: id, Allow: a}, nil
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
