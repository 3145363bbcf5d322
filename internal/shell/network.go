package shell

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/netproxy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// networkPlan is how a session holds its network setting.
type networkPlan struct {
	// namespaced: the shell gets a network namespace of its own.
	namespaced bool
	held       bool
	text       string
	// missing, when not "", is why the network setting cannot be held
	// here: exec refuses to start (networkMissing).
	missing string
}

// networkMissing is exec's error for a network setting it cannot hold.
func networkMissing(p sandbox.Policy, missing string) error {
	return fserr.New(fserr.ConfigInvalid, "exec: network "+string(p.Network)+" cannot be held here: "+missing+
		"\nhint: network: on, a mode with the mount layer (workspace-write, read-only) where user namespaces are allowed, or run as root")
}

// networkLayer decides the network of a session under p (docs/design.md
// §10, network) and the text policy shows. mounts says the session has
// the mount layer's namespaces (a user namespace where not root), in
// which the network namespace is made too; as root one is made without
// them. withInit says the session has its own first process
// (session.Init), where the allowlist's bridge to the proxy runs:
// without one, allowlist is off. Where no namespace can be made, the
// setting cannot be held (missing), unless enforce is off: no fallback
// holds it whole (Landlock's TCP rules grant a port to every address,
// and miss UDP and io_uring's sockets).
func networkLayer(p sandbox.Policy, mounts, withInit bool) networkPlan {
	if p.Network == sandbox.NetworkOn {
		return networkPlan{held: true, text: "on: the host's network, every address it reaches"}
	}
	allow := "no host"
	if len(p.NetworkAllow) > 0 {
		allow = strings.Join(p.NetworkAllow, ", ")
	}
	reach := "it reaches only " + allow + ", and a loopback, private or link-local address only when an entry names it"
	if p.NetworkApproval.Asks() {
		reach += "; another host is put to the approver (network_approval " + string(p.NetworkApproval) + ") once for the session"
	}
	if !mounts && os.Geteuid() != 0 {
		nsWhy := "no network namespace: without the mount layer's user namespace a user that is not root cannot make one"
		if p.Mode == sandbox.DangerFullAccess {
			nsWhy = "no network namespace: danger-full-access has no mount layer, whose user namespace a user that is not root needs for one"
		}
		text := "not held for the shell: network " + string(p.Network) + " needs a network namespace, and " + nsWhy[len("no network namespace: "):]
		if p.Enforce == sandbox.EnforceOff {
			return networkPlan{text: text + " (enforce: off)"}
		}
		return networkPlan{text: text, missing: nsWhy}
	}
	off := "a network namespace of its own with only loopback; nothing leaves it, not even to the host's 127.0.0.1"
	if p.Network == sandbox.NetworkAllowlist {
		if !withInit {
			return networkPlan{namespaced: true, held: true, text: "off (allowlist needs the session's PID namespace, where the bridge to the proxy runs): " + off}
		}
		return networkPlan{namespaced: true, held: true, text: "allowlist: a network namespace of its own with only loopback, where HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name the session's proxy (HTTP, CONNECT, SOCKS5), run by the supervisor; " + reach}
	}
	return networkPlan{namespaced: true, held: true, text: "off: " + off}
}

// newProxy is the session's proxy, whose refusals are lines of the
// session's log: exec's standard error, as the git guard's report.
// A host no entry allows is put to the approver, where the trusted
// network_approval is command or supervisor, once for the session
// (approval.ApproveHost); otherwise nobody is asked.
func (s *supervisor) newProxy() (*netproxy.Proxy, error) {
	enc := json.NewEncoder(s.log())
	enc.SetEscapeHTML(false)
	var mu sync.Mutex
	proxy, err := netproxy.New(s.settings.Policy.NetworkAllow, func(r *netproxy.Refusal) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(networkRefusal{Op: "exec", Network: networkRefused{Host: r.Host, Port: r.Port, Why: r.Why, Setting: netproxy.Setting}})
		s.audit.Write(audit.Refused(r.Host, r.Port, r.Why))
	})
	if err != nil {
		return nil, err
	}
	proxy.OnAllowed(s.allowedHook)
	p := s.settings.Policy
	if p.NetworkApproval.Asks() {
		proxy.SetApprover(func(host string, port int) error {
			req := sandbox.EscalationRequest{Kind: sandbox.KindNetworkHost, Op: sandbox.OpNetwork, Path: net.JoinHostPort(host, strconv.Itoa(port)),
				From: p.Mode, To: p.Mode, Reason: "not in " + netproxy.Setting}
			err := approval.ApproveHost(p, req, func(req sandbox.EscalationRequest) error {
				return s.askTerminal(session.Ask{Request: req})
			})
			s.audit.Write(audit.HostAnswer(host, port, err))
			return err
		})
	}
	return proxy, nil
}

// startProxy readies the allowlist's proxy of a session whose child is
// child: the channel's bridge end is the child's descriptor proxyFD,
// and the proxy serves what comes through it until the session ends.
// It returns the function that ends the proxy.
func (s *supervisor) startProxy(child *exec.Cmd) (fd int, stop func(), err error) {
	proxyEnd, bridgeEnd, err := netproxy.NewChannel()
	if err != nil {
		return 0, nil, err
	}
	proxy, err := s.newProxy()
	if err != nil {
		proxyEnd.Close()
		bridgeEnd.Close()
		return 0, nil, err
	}
	child.ExtraFiles = append(child.ExtraFiles, bridgeEnd)
	go func() {
		// It ends when the session's last process, which holds the
		// bridge end, is gone.
		proxy.ServeBridge(proxyEnd)
		proxyEnd.Close()
	}()
	return 2 + len(child.ExtraFiles), func() {
		bridgeEnd.Close()
		proxy.Close()
	}, nil
}

// networkRefusal is the line exec writes to its standard error for each
// connection the proxy refused.
type networkRefusal struct {
	Op      string         `json:"op"`
	Network networkRefused `json:"network_refused"`
}

type networkRefused struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Why     string `json:"why"`
	Setting string `json:"setting"`
}

// withNetworkNamespace gives the child attr starts a network namespace
// of its own: in the user namespace attr makes, where there is one, with
// CAP_NET_ADMIN there to bring loopback up (cleared before CMD, as the
// mount layer's capabilities are).
func withNetworkNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
	}
}

// NetworkOutsideText is policy's network line outside a session: what
// dsh-fs exec would do here.
func NetworkOutsideText(p sandbox.Policy) string {
	if p.Network == sandbox.NetworkOn {
		return "on: the host's network, every address it reaches"
	}
	mounts := p.Mode != sandbox.DangerFullAccess && func() bool { ok, _ := sandbox.MountLayer(); return ok }()
	plan := networkLayer(p, mounts && (os.Geteuid() == 0 || sandbox.UserNamespace()), mounts)
	switch {
	case plan.namespaced:
		return "not held for the shell: no dsh-fs exec session (dsh-fs exec would give it " + strings.SplitN(plan.text, ": ", 2)[1] + ")"
	case plan.missing != "":
		return "not held for the shell: no dsh-fs exec session (dsh-fs exec refuses to start here: " + plan.missing + ")"
	}
	return "not held for the shell: no dsh-fs exec session (dsh-fs exec could not here: " + strings.TrimPrefix(plan.text, "not held for the shell: ") + ")"
}

// NetworkRecordText is policy's network line from a session's record.
func NetworkRecordText(sh session.Shell) (bool, string) {
	if sh.Network == "" {
		return false, "not held for the shell: the session's record says nothing of the network"
	}
	return sh.NetworkHeld, sh.Network
}

// NetworkContextLine is the network line of the sandbox:policy block.
func NetworkContextLine(p sandbox.Policy) string {
	switch p.Network {
	case sandbox.NetworkOn:
		return "network (dsh-fs exec shell): on, any host\n"
	case sandbox.NetworkAllowlist:
		allow := "none"
		if len(p.NetworkAllow) > 0 {
			allow = strings.Join(p.NetworkAllow, ", ")
		}
		others := "other hosts get 403 naming the host and network_allow"
		if p.NetworkApproval.Asks() {
			others = "another host is put to the approver once, else gets 403 naming the host and network_allow"
		}
		return fmt.Sprintf("network (dsh-fs exec shell): only through the session's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) to %s; %s\n", allow, others)
	}
	return "network (dsh-fs exec shell): off; no host is reachable, not even the host's 127.0.0.1\n"
}

// startBridge starts, in the session's first process, the bridge from a
// loopback port of its network namespace to the proxy's channel at fd,
// and returns CMD's environment env naming that port.
func startBridge(fd int, env []string) ([]string, error) {
	// CMD and what it starts never hold the channel.
	unix.CloseOnExec(fd)
	l, err := netproxy.Listen()
	if err != nil {
		return nil, err
	}
	go netproxy.Bridge(l, os.NewFile(uintptr(fd), "proxy-channel"))
	return netproxy.Env(env, l.Addr().(*net.TCPAddr).Port), nil
}
